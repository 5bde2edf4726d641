import { parse as parseCsv } from 'csv-parse/sync';

import { extractDocx } from './docx.extractor';
import { ExtractionError } from './extraction.errors';
import type { Extracted, ExtractInput, ExtractionLimits, Format } from './extraction.model';
import { htmlToText } from './html.extractor';
import { extractPdf } from './pdf.extractor';

const CODE_LANGUAGES: Record<string, string> = {
  ts: 'typescript',
  tsx: 'typescript',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  py: 'python',
  java: 'java',
  kt: 'kotlin',
  go: 'go',
  rs: 'rust',
  c: 'c',
  h: 'c',
  cc: 'cpp',
  cpp: 'cpp',
  hpp: 'cpp',
  cs: 'csharp',
  rb: 'ruby',
  php: 'php',
  swift: 'swift',
  scala: 'scala',
  sh: 'shell',
  sql: 'sql',
  yaml: 'yaml',
  yml: 'yaml',
  toml: 'toml',
};
const BY_EXTENSION: Record<string, Format> = {
  md: 'markdown',
  markdown: 'markdown',
  mdx: 'markdown',
  txt: 'text',
  text: 'text',
  log: 'text',
  html: 'html',
  htm: 'html',
  csv: 'csv',
  json: 'json',
  pdf: 'pdf',
  docx: 'docx',
};
const BY_MIME: Record<string, Format> = {
  'text/markdown': 'markdown',
  'text/html': 'html',
  'text/csv': 'csv',
  'application/json': 'json',
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
};
const BINARY: ReadonlySet<Format> = new Set(['pdf', 'docx']);

/** What the first bytes say the content is, when they say anything. */
function sniff(body: Buffer): 'pdf' | 'zip' | undefined {
  if (body.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (body.length >= 4 && body.readUInt32BE(0) === 0x504b0304) return 'zip';
  return undefined;
}

/**
 * The format from the content (magic bytes), the file name and the declared type. A declared
 * binary type the content contradicts is `type_mismatch`; a name or type nothing here reads is
 * `unsupported_type`.
 */
export function detectFormat(input: ExtractInput): { format: Format; language?: string } {
  const extension = input.filename.toLowerCase().split('.').pop() ?? '';
  const declared = BY_MIME[input.contentType.split(';')[0]!.trim().toLowerCase()];
  const named = BY_EXTENSION[extension];
  const magic = sniff(input.body);
  if (magic === 'pdf') return { format: 'pdf' };
  if (magic === 'zip' && (named === 'docx' || declared === 'docx')) return { format: 'docx' };
  const claimed = declared ?? named;
  if (claimed && BINARY.has(claimed)) {
    throw new ExtractionError(
      'type_mismatch',
      `"${input.filename}" is declared ${claimed.toUpperCase()} but its content is not`,
    );
  }
  if (magic === 'zip') {
    throw new ExtractionError('unsupported_type', `"${input.filename}" is an archive`);
  }
  const language = CODE_LANGUAGES[extension];
  if (named && named !== 'text') return { format: named };
  if (language) return { format: 'code', language };
  if (declared) return { format: declared };
  if (named === 'text' || input.contentType.startsWith('text/')) return { format: 'text' };
  throw new ExtractionError(
    'unsupported_type',
    `"${input.filename}" (${input.contentType}) is not a supported type: text, Markdown, HTML, CSV, JSON, source code, PDF or DOCX`,
  );
}

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
  const extracted =
    format === 'pdf'
      ? await extractPdf(input)
      : format === 'docx'
        ? await extractDocx(input, limits)
        : extractTextual(input, format);
  if (extracted.text.length > limits.maxTextChars) {
    throw new ExtractionError(
      'too_large',
      `"${input.filename}" has ${extracted.text.length} characters of text, over the ${limits.maxTextChars} limit`,
    );
  }
  if (!/\S/.test(extracted.text)) {
    throw new ExtractionError('no_text', `"${input.filename}" has no extractable text`);
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
    case 'json':
      return { text: jsonToText(raw, input.filename), format };
    default:
      return { text: raw, format };
  }
}

/** One line per record, `column: value` pairs, so each row reads (and embeds) on its own. */
function csvToText(raw: string, filename: string): string {
  let rows: Record<string, string>[];
  try {
    rows = parseCsv(raw, {
      columns: true,
      skip_empty_lines: true,
      bom: true,
      relax_column_count: true,
    });
  } catch (error) {
    throw new ExtractionError('parse_error', `"${filename}" is not valid CSV: ${String(error)}`);
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
