/** What the parser extracts text from: an original as stored, with what the uploader said it is. */
export interface ExtractInput {
  filename: string;
  contentType: string;
  body: Buffer;
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
  | 'docx'
  | 'xlsx'
  | 'pptx'
  | 'odt'
  | 'ods'
  | 'odp'
  | 'epub'
  | 'rtf'
  | 'eml';

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
}

/** Bounds on what one document may cost to extract; past any of them it fails `too_large`. */
export interface ExtractionLimits {
  /** Entries a ZIP container (DOCX, XLSX, PPTX, OpenDocument, EPUB) may hold. */
  maxZipEntries: number;
  /** Bytes a ZIP container's entries may inflate to, counted while inflating. */
  maxInflatedBytes: number;
  /** Characters of extracted text. */
  maxTextChars: number;
}

/**
 * Extracts a document's text. The service runs it in worker threads (worker.extractor.ts); tests
 * of what comes after extraction may run it in process (in-process.extractor.ts).
 */
export interface TextExtractor {
  extract(input: ExtractInput): Promise<Extracted>;
}
