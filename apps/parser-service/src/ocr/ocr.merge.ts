import type { OcrReport } from '@kb/contracts';

import type { Extracted } from '../parsing/extraction.model';
import type { OcrResult } from './ocr.worker';

/**
 * Puts OCR's text into the slots of the pages it read, moving every later offset, and reports
 * each page's confidence. A page under `minConfidence` is flagged and left empty: its text
 * would be indexed as noise. Pure: the OCR has been run.
 */
export function mergeOcr(
  extracted: Omit<Extracted, 'ocrPages'>,
  read: Map<number, OcrResult>,
  options: { minConfidence: number; languages: string[] },
): Extracted {
  const report: OcrReport = {
    languages: options.languages,
    minConfidence: options.minConfidence,
    pages: [],
  };
  const pages = [...(extracted.pages ?? [])].sort((a, b) => a.start - b.start || a.page - b.page);
  let text = '';
  let cursor = 0;
  const placed: NonNullable<Extracted['pages']> = [];
  for (const page of pages) {
    text += extracted.text.slice(cursor, page.start);
    const result = read.get(page.page);
    let content = extracted.text.slice(page.start, page.end);
    if (result) {
      const recognised = tidy(result.text);
      const flagged = result.confidence < options.minConfidence;
      report.pages.push({
        page: page.page,
        confidence: result.confidence,
        flagged,
        chars: recognised.length,
      });
      if (!flagged && recognised) {
        content = recognised;
        if (text && !text.endsWith('\n')) text += '\n\n';
      }
    }
    const start = text.length;
    text += content;
    placed.push({ page: page.page, start, end: text.length });
    cursor = page.end;
  }
  text += extracted.text.slice(cursor);
  report.pages.sort((a, b) => a.page - b.page);
  placed.sort((a, b) => a.page - b.page);
  return { ...extracted, text, pages: placed, ocr: report };
}

/** Tesseract's lines without trailing spaces, paragraphs kept, no blank runs. */
const tidy = (text: string): string =>
  text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
