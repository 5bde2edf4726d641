import { parse as parseCsv } from 'csv-parse/sync';

import { extractDoc } from './doc.extractor';
import { extractDocx } from './docx.extractor';
import { extractEml } from './eml.extractor';
import { extractEpub } from './epub.extractor';
import { ExtractionError } from './extraction.errors';
import {
  DEFAULT_SETTINGS,
  type Extracted,
  type ExtractInput,
  type ExtractionLimits,
  type Format,
} from './extraction.model';
import { detectFormat } from './format.detector';
import { htmlToText } from './html.extractor';
import { extractImage } from './image.extractor';
import { extractOdf } from './odf.extractor';
import { extractPdf } from './pdf.extractor';
import { extractPptx } from './pptx.extractor';
import { extractRtf } from './rtf.extractor';
import { extractXlsx } from './xlsx.extractor';
import { xmlToText } from './xml.parts';

export { detectFormat } from './format.detector';

const settingsOf = (input: ExtractInput) => input.settings ?? DEFAULT_SETTINGS;

type BinaryExtractor = (input: ExtractInput, limits: ExtractionLimits) => Promise<Extracted>;
/** Formats read from bytes rather than from UTF-8 text. */
const BINARY_EXTRACTORS: Partial<Record<Format, BinaryExtractor>> = {
  pdf: (input, limits) => extractPdf(input, limits, settingsOf(input).ocr),
  image: (input, limits) => extractImage(input, limits, settingsOf(input).ocr),
  doc: (input) => extractDoc(input),
  docx: extractDocx,
  xlsx: (input, limits) => extractXlsx(input, limits, settingsOf(input).tableMode),
  pptx: extractPptx,
  odt: (input, limits) => extractOdf(input, limits, 'odt'),
  ods: (input, limits) => extractOdf(input, limits, 'ods', settingsOf(input).tableMode),
  odp: (input, limits) => extractOdf(input, limits, 'odp'),
  epub: extractEpub,
  eml: (input) => extractEml(input),
  rtf: (input) => extractRtf(input),
};

/** Formats whose text may come from OCR. */
const BINARY_OCR: ReadonlySet<Format> = new Set(['pdf', 'image']);

/**
 * Extracts a document's text in its structure's reading order. Malformed or encrypted files,
 * decompression bombs and files with no text fail with a reason code, never a crash. This runs
 * in the calling thread: the service calls it in a worker (worker.extractor.ts), which bounds
 * what no check here can (memory, time).
 */
export async function extractText(
  input: ExtractInput,
  limits: ExtractionLimits,
): Promise<Extracted> {
  const { format, language } = detectFormat(input);
  const binary = BINARY_EXTRACTORS[format];
  const extracted = binary ? await binary(input, limits) : extractTextual(input, format);
  if (extracted.text.length > limits.maxTextChars) {
    throw new ExtractionError(
      'too_large',
      `"${input.filename}" has ${extracted.text.length} characters of text, over the ${limits.maxTextChars} limit`,
    );
  }
  // Pages waiting for OCR may still bring text: ocr/ocr-text.extractor.ts checks after it.
  if (!/\S/.test(extracted.text) && !extracted.ocrPages?.length) {
    const off = BINARY_OCR.has(format) && !settingsOf(input).ocr ? ' (OCR is off)' : '';
    throw new ExtractionError('no_text', `"${input.filename}" has no extractable text${off}`);
  }
  return { ...extracted, ...(language ? { language } : {}) };
}

function decodeUtf8(input: ExtractInput): string {
  if (input.body.includes(0)) {
    throw new ExtractionError('unsupported_type', `"${input.filename}" is binary, not text`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(input.body);
  } catch {
    throw new ExtractionError('unsupported_type', `"${input.filename}" is not valid UTF-8 text`);
  }
}

function extractTextual(input: ExtractInput, format: Format): Extracted {
  const raw = decodeUtf8(input);
  switch (format) {
    case 'html':
      return { ...htmlToText(raw), format };
    case 'csv':
      return { text: csvToText(raw, input.filename), format };
    case 'tsv':
      return { text: csvToText(raw, input.filename, '\t'), format };
    case 'xml':
      return { text: xmlToText(raw), format };
    case 'json':
      return { text: jsonToText(raw, input.filename), format };
    default:
      return { text: raw, format };
  }
}

/** One line per record, `column: value` pairs, so each row reads (and embeds) on its own. */
function csvToText(raw: string, filename: string, delimiter = ','): string {
  let rows: Record<string, string>[];
  try {
    rows = parseCsv(raw, {
      columns: true,
      skip_empty_lines: true,
      bom: true,
      relax_column_count: true,
      delimiter,
      ...(delimiter === '\t' ? { quote: false } : {}),
    });
  } catch (error) {
    const kind = delimiter === ',' ? 'CSV' : 'TSV';
    throw new ExtractionError(
      'parse_error',
      `"${filename}" is not valid ${kind}: ${String(error)}`,
    );
  }
  return rows
    .map((row) =>
      Object.entries(row)
        .filter(([, value]) => value !== undefined && value !== '')
        .map(([key, value]) => `${key}: ${value}`)
        .join('; '),
    )
    .join('\n');
}

/** Pretty-printed, so keys and values sit on their own lines for chunking. */
function jsonToText(raw: string, filename: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch (error) {
    throw new ExtractionError('parse_error', `"${filename}" is not valid JSON: ${String(error)}`);
  }
}
