import { z } from 'zod';

/**
 * What OCR read of a document (docs/adr/0050): the languages, and each page it recognised with
 * tesseract's mean word confidence (0-100). A page below the parser's OCR_MIN_CONFIDENCE is
 * `flagged` and its text is left out of the document rather than indexed as noise.
 */
export const ocrReportSchema = z.object({
  languages: z.array(z.string()),
  minConfidence: z.number().min(0).max(100),
  pages: z.array(
    z.object({
      // min(1), not positive(): an OpenAPI 3.0 document cannot state an exclusive minimum.
      page: z.number().int().min(1),
      confidence: z.number().min(0).max(100),
      flagged: z.boolean(),
      /** Characters of recognised text (kept or, when flagged, left out). */
      chars: z.number().int().nonnegative(),
    }),
  ),
});
export type OcrReport = z.infer<typeof ocrReportSchema>;

/**
 * The text parser-service extracted from one document version, stored once per version beside
 * its chunks. Every offset here, and every chunk's `start`/`end` in search hits and context
 * citations, counts UTF-16 code units of `text`: `text.slice(hit.start, hit.end)` is the hit.
 * document-service serves it as `GET /v1/documents/{id}/text`.
 */
export const extractedTextSchema = z.object({
  documentId: z.uuid(),
  version: z.number().int().positive(),
  /** The format the parser read the content as: text, markdown, html, csv, json, code, pdf, docx. */
  format: z.string(),
  text: z.string(),
  /** Where each page starts and ends (PDF only; empty otherwise). */
  pages: z.array(
    z.object({
      page: z.number().int().positive(),
      start: z.number().int().nonnegative(),
      end: z.number().int().nonnegative(),
    }),
  ),
  /** Markdown-style headings of the text (Markdown, HTML and DOCX), in order. */
  headings: z.array(
    z.object({
      start: z.number().int().nonnegative(),
      level: z.number().int().min(1).max(6),
      text: z.string(),
    }),
  ),
  /** Present when some pages were read by OCR (images, PDF pages without a text layer). */
  ocr: ocrReportSchema.optional(),
});
export type ExtractedText = z.infer<typeof extractedTextSchema>;

/** Where the extracted text of a document version is stored (beside its chunks). */
export const extractedTextKey = (tenantId: string, documentId: string, version: number): string =>
  `derived/${tenantId}/${documentId}/v${version}/text.json`;

/**
 * Since review N6 the extracted text is stored so that a reader fetches only the window it
 * serves: the text itself as UTF-8 (`text.txt`), read with S3 byte ranges, and a small index
 * (`text.index.json`) with the format, the page and heading maps, the length, and where every
 * block of about `TEXT_BLOCK_UNITS` UTF-16 code units starts in the bytes. A window then reads at
 * most one block before and one after it. `text.json` (the whole text in one JSON object) is what
 * versions parsed before that have; document-service still reads it, within bounds.
 */
export const extractedTextBodyKey = (
  tenantId: string,
  documentId: string,
  version: number,
): string => `derived/${tenantId}/${documentId}/v${version}/text.txt`;

export const extractedTextIndexKey = (
  tenantId: string,
  documentId: string,
  version: number,
): string => `derived/${tenantId}/${documentId}/v${version}/text.index.json`;

/** Code units per block of the stored text: a window reads at most two blocks more than it serves. */
export const TEXT_BLOCK_UNITS = 16_384;

export const extractedTextIndexSchema = extractedTextSchema.omit({ text: true }).extend({
  /** The text's length in UTF-16 code units. */
  length: z.number().int().nonnegative(),
  /**
   * `[unit, byte]` where each block starts (the first is `[0, 0]`), then `[length, bytes]` at the
   * end; increasing. A block never starts inside a surrogate pair, so every block decodes alone.
   */
  blocks: z.array(z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()])).min(1),
});
export type ExtractedTextIndex = z.infer<typeof extractedTextIndexSchema>;

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/**
 * The stored form of an extracted text: its UTF-8 bytes and its index. A lone surrogate is
 * stored as U+FFFD (one code unit, so no offset moves).
 */
export function textLayoutOf(
  extracted: ExtractedText,
  blockUnits = TEXT_BLOCK_UNITS,
): { body: Buffer; index: ExtractedTextIndex } {
  const { text, ...rest } = extracted;
  const blocks: Array<[number, number]> = [[0, 0]];
  const parts: Buffer[] = [];
  let bytes = 0;
  for (let start = 0; start < text.length;) {
    let end = Math.min(start + blockUnits, text.length);
    // Never split a surrogate pair: the block ends before its high half (or after its low one).
    if (
      end < text.length &&
      isHighSurrogate(text.charCodeAt(end - 1)) &&
      isLowSurrogate(text.charCodeAt(end))
    ) {
      end += end - 1 > start ? -1 : 1;
    }
    const part = Buffer.from(text.slice(start, end), 'utf8');
    parts.push(part);
    bytes += part.length;
    blocks.push([end, bytes]);
    start = end;
  }
  return {
    body: Buffer.concat(parts, bytes),
    index: { ...rest, length: text.length, blocks },
  };
}

/**
 * The byte range of the stored text that holds the code units `[start, end)`, and the unit the
 * range starts at; undefined for an empty window.
 */
export function textRangeOf(
  index: Pick<ExtractedTextIndex, 'blocks'>,
  start: number,
  end: number,
): { firstUnit: number; startByte: number; endByte: number } | undefined {
  if (end <= start) return undefined;
  const { blocks } = index;
  // The last block starting at or before `start`, and the first boundary at or after `end`.
  let low = 0;
  let high = blocks.length - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (blocks[mid]![0] <= start) low = mid;
    else high = mid - 1;
  }
  let last = low;
  while (last < blocks.length - 1 && blocks[last]![0] < end) last += 1;
  const [firstUnit, startByte] = blocks[low]!;
  return { firstUnit, startByte, endByte: blocks[last]![1] };
}
