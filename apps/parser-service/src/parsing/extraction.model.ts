import type { AttachmentSkipReason, OcrReport, ParsingSettings } from '@kb/contracts';

/**
 * How a knowledge base wants its documents read (set at its creation; docs/adr/0050): OCR on or
 * off, OCR's languages (empty: OCR_LANGUAGES), spreadsheets as records or as text.
 */
export type ExtractionSettings = ParsingSettings;

export const DEFAULT_SETTINGS: ExtractionSettings = {
  ocr: true,
  ocrLanguages: [],
  tableMode: 'records',
};

/** What the parser extracts text from: an original as stored, with what the uploader said it is. */
export interface ExtractInput {
  filename: string;
  contentType: string;
  body: Buffer;
  /** The document's parsing settings; DEFAULT_SETTINGS when absent. */
  settings?: ExtractionSettings;
  /**
   * A mail's attachments are read as files of their own within these bounds (docs/adr/0048);
   * absent (an attachment itself, or not a mail), they are only named.
   */
  attachments?: AttachmentLimits;
}

/** How many of a mail's attachments, and how large each, the parser hands on. */
export interface AttachmentLimits {
  max: number;
  maxBytes: number;
}

/** One attachment of a mail, in a format the parser reads, as bytes for a document of its own. */
export interface AttachmentFile {
  /** Its place among the mail's attachments, from 0: stable across re-reads of one version. */
  index: number;
  filename: string;
  contentType: string;
  body: Uint8Array;
}

/** An attachment not handed on, and why. */
export interface SkippedAttachment {
  index: number;
  filename: string;
  reason: AttachmentSkipReason;
}

export type Format =
  | 'text'
  | 'markdown'
  | 'html'
  | 'csv'
  | 'tsv'
  | 'json'
  | 'xml'
  | 'code'
  | 'pdf'
  | 'doc'
  | 'docx'
  | 'xlsx'
  | 'pptx'
  | 'odt'
  | 'ods'
  | 'odp'
  | 'epub'
  | 'rtf'
  | 'eml'
  | 'image';

export interface Extracted {
  text: string;
  format: Format;
  /**
   * Where each page starts and ends in `text`: PDF pages, PPTX/ODP slides, XLSX/ODS sheets (in
   * workbook order from 1).
   */
  pages?: Array<{ page: number; start: number; end: number }>;
  /** The document's own title when the format carries one (HTML <title>, PDF info). */
  title?: string;
  /** Source language, for code. */
  language?: string;
  /**
   * Pages with no text of their own, rendered as PNG for OCR: an image's pages, a PDF's pages
   * without a text layer. Their slots in `pages` are empty until OCR fills them
   * (ocr/ocr-text.extractor.ts); never in a finished extraction.
   */
  ocrPages?: Array<{ page: number; image: Uint8Array }>;
  /** What OCR read, page by page, and which pages it left out (docs/adr/0050). */
  ocr?: OcrReport;
  /** A mail's attachments read as files of their own, and those skipped (`attachments` input). */
  attachments?: { files: AttachmentFile[]; skipped: SkippedAttachment[] };
}

/** Bounds on what one document may cost to extract; past any of them it fails `too_large`. */
export interface ExtractionLimits {
  /** Entries a ZIP container (DOCX, XLSX, PPTX, OpenDocument, EPUB) may hold. */
  maxZipEntries: number;
  /** Bytes a ZIP container's entries may inflate to, counted while inflating. */
  maxInflatedBytes: number;
  /** Characters of extracted text. */
  maxTextChars: number;
  /** Pixels of one image (or one page of a multi-page TIFF) read by OCR. */
  maxImagePixels: number;
  /** Pages of one document read by OCR: image pages, PDF pages without a text layer. */
  maxOcrPages: number;
}

/**
 * Extracts a document's text. The service runs it in worker threads (worker.extractor.ts); tests
 * of what comes after extraction may run it in process (in-process.extractor.ts).
 */
export interface TextExtractor {
  extract(input: ExtractInput): Promise<Extracted>;
}
