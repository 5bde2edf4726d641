import { PermanentError } from '@kb/kafka';

import {
  DEFAULT_SETTINGS,
  type Extracted,
  type ExtractInput,
  type TextExtractor,
} from '../parsing/extraction.model';
import { installedLanguages } from './ocr.languages';
import { mergeOcr } from './ocr.merge';
import type { PageRecognizer } from './ocr.pool';
import type { OcrResult } from './ocr.worker';

export interface OcrOptions {
  /** Languages when a knowledge base names none (OCR_LANGUAGES). */
  defaultLanguages: string[];
  /** Mean word confidence (0-100) under which a page is flagged and left out. */
  minConfidence: number;
  /** Characters of extracted text one document may have. */
  maxTextChars: number;
  log: (message: string) => void;
}

/**
 * Extraction, then OCR of the pages extraction rendered (images, PDF pages without a text layer):
 * the pages go to the OCR pool one by one, in page order, and their text is merged into the
 * document's at their pages' places (ocr.merge.ts). Other documents pass through untouched.
 */
export class OcrTextExtractor implements TextExtractor {
  constructor(
    private readonly inner: TextExtractor,
    private readonly recognizer: PageRecognizer,
    private readonly options: OcrOptions,
  ) {}

  async extract(input: ExtractInput): Promise<Extracted> {
    const extracted = await this.inner.extract(input);
    const { ocrPages, ...rest } = extracted;
    if (!ocrPages?.length) return extracted;
    const languages = this.languagesOf(input);
    const read = new Map<number, OcrResult>();
    // One page at a time: a long scan never holds more than one of the pool's threads.
    for (const { page, image } of ocrPages) {
      read.set(page, await this.recognizer.recognize({ image, languages }));
    }
    const merged = mergeOcr(rest, read, { minConfidence: this.options.minConfidence, languages });
    if (merged.text.length > this.options.maxTextChars) {
      throw new PermanentError(
        'too_large',
        `"${input.filename}" has ${merged.text.length} characters of text, over the ${this.options.maxTextChars} limit`,
      );
    }
    if (!/\S/.test(merged.text)) {
      const flagged = merged.ocr?.pages.filter((page) => page.flagged).length ?? 0;
      throw new PermanentError(
        'no_text',
        flagged > 0
          ? `"${input.filename}" has no text OCR read with confidence ${this.options.minConfidence} or more (${flagged} page(s) flagged)`
          : `"${input.filename}" has no text, OCR found none`,
      );
    }
    return merged;
  }

  /** The knowledge base's languages that are installed, else the deployment's. */
  private languagesOf(input: ExtractInput): string[] {
    const wanted = (input.settings ?? DEFAULT_SETTINGS).ocrLanguages;
    if (wanted.length === 0) return this.options.defaultLanguages;
    const { found, missing } = installedLanguages(wanted);
    if (missing.length > 0) {
      this.options.log(
        `OCR language data not installed: ${missing.join(', ')}; reading "${input.filename}" in ${(found.length ? found : this.options.defaultLanguages).join('+')}`,
      );
    }
    return found.length > 0 ? found : this.options.defaultLanguages;
  }
}
