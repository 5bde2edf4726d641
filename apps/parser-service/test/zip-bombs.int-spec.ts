import JSZip from 'jszip';

import { ExtractionError } from '../src/parsing/extraction.errors';
import type { ExtractInput, ExtractionLimits } from '../src/parsing/extraction.model';
import { extractText as extractWithLimits } from '../src/parsing/text.extractor';
import { lyingDocx } from './fixtures/zip.fixtures';

/**
 * Decompression bombs against the extractor itself (in-process, no worker): each inflates tens of
 * MB, seconds on a busy 2-core machine, so they run in the integration tier, not the unit tier
 * (docs/adr/0035). The pooled worker meets the same archives in extraction-worker.int-spec.ts.
 */
const LIMITS: ExtractionLimits = {
  maxZipEntries: 100,
  maxInflatedBytes: 64 * 1024 * 1024,
  maxTextChars: 1_000_000,
  maxImagePixels: 40_000_000,
  maxOcrPages: 50,
};
const extractText = (input: ExtractInput) => extractWithLimits(input, LIMITS);

const input = (filename: string, body: Buffer): ExtractInput => ({
  filename,
  contentType: 'application/octet-stream',
  body,
});

async function reasonOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return error instanceof ExtractionError
      ? error.reason
      : `not an ExtractionError: ${String(error)}`;
  }
  return undefined;
}

describe('extractText against zip bombs', () => {
  it('refuses a DOCX that would inflate past the limit (decompression bomb)', async () => {
    const zip = new JSZip();
    zip.file('word/document.xml', Buffer.alloc(70 * 1024 * 1024, 0x20));
    const bomb = await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect(await reasonOf(extractText(input('bomb.docx', bomb)))).toBe('too_large');
    // Deflating 70 MB takes seconds on a busy 2-core machine.
  }, 30_000);

  it('counts the bytes really inflated, not the sizes the central directory declares', async () => {
    // Declares 100 bytes, inflates to 80 MiB: the old guard summed the declared sizes.
    const bomb = lyingDocx(80 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const failure = extractText(input('lying.docx', bomb));
    await expect(failure).rejects.toThrow(/inflates past the 67108864-byte limit/);
    expect(await reasonOf(failure)).toBe('too_large');
    // Under the limit, the lie is still caught (JSZip checks the size once inflated).
    const small = extractText(input('small-lie.docx', lyingDocx(200_000)));
    expect(await reasonOf(small)).toBe('parse_error');
  }, 30_000);
});
