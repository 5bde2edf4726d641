import { extract, TEST_LIMITS } from '../../test/fixtures/extraction.fixtures';
import { MALFORMED } from '../../test/fixtures/malformed.fixtures';
import { ExtractionError } from './extraction.errors';

describe('the malformed-file corpus (issue 38 formats)', () => {
  it.each(MALFORMED.map((file) => [file.name, file] as const))(
    '%s: extracted or failed with a reason, never another error',
    async (_name, file) => {
      const body = await file.body();
      const outcome = await extract(
        { filename: file.filename, contentType: 'application/octet-stream', body },
        { maxTextChars: TEST_LIMITS.maxTextChars * 4 },
      ).then(
        () => 'extracted',
        (error: unknown) =>
          error instanceof ExtractionError ? error.reason : `crashed: ${String(error)}`,
      );
      expect(outcome).toMatch(/^(extracted|parse_error|too_large|no_text|unsupported_type)$/);
    },
  );
});
