import { PermanentError } from '@kb/kafka';

import { ExtractionError } from './extraction.errors';
import type { ExtractionLimits, TextExtractor } from './extraction.model';
import { extractText } from './text.extractor';

/**
 * Extraction in the calling thread, with no memory or time bound: for tests of what comes after
 * extraction. The service extracts in worker threads (worker.extractor.ts).
 */
export const inProcessExtractor = (limits: ExtractionLimits): TextExtractor => ({
  extract: async (input) => {
    try {
      return await extractText(input, limits);
    } catch (error) {
      if (error instanceof ExtractionError) throw new PermanentError(error.reason, error.message);
      throw error;
    }
  },
});
