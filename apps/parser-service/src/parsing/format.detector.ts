import { COMPOUND_FILE_MAGIC } from './doc.extractor';
import { ExtractionError } from './extraction.errors';
import type { ExtractInput, Format } from './extraction.model';

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
const OOXML = 'application/vnd.openxmlformats-officedocument';
const ODF = 'application/vnd.oasis.opendocument';
const BY_EXTENSION: Record<string, Format> = {
  md: 'markdown',
  markdown: 'markdown',
  mdx: 'markdown',
  txt: 'text',
  text: 'text',
  log: 'text',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  csv: 'csv',
  tsv: 'tsv',
  tab: 'tsv',
  json: 'json',
  xml: 'xml',
  pdf: 'pdf',
  doc: 'doc',
  docx: 'docx',
  xlsx: 'xlsx',
  pptx: 'pptx',
  odt: 'odt',
  ods: 'ods',
  odp: 'odp',
  epub: 'epub',
  eml: 'eml',
  rtf: 'rtf',
  png: 'image',
  jpg: 'image',
  jpeg: 'image',
  tif: 'image',
  tiff: 'image',
  webp: 'image',
};
const BY_MIME: Record<string, Format> = {
  'text/markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/csv': 'csv',
  'text/tab-separated-values': 'tsv',
  'application/json': 'json',
  'application/xml': 'xml',
  'text/xml': 'xml',
  'application/pdf': 'pdf',
  'application/msword': 'doc',
  [`${OOXML}.wordprocessingml.document`]: 'docx',
  [`${OOXML}.spreadsheetml.sheet`]: 'xlsx',
  [`${OOXML}.presentationml.presentation`]: 'pptx',
  [`${ODF}.text`]: 'odt',
  [`${ODF}.spreadsheet`]: 'ods',
  [`${ODF}.presentation`]: 'odp',
  'application/epub+zip': 'epub',
  'message/rfc822': 'eml',
  'application/rtf': 'rtf',
  'text/rtf': 'rtf',
  'image/png': 'image',
  'image/jpeg': 'image',
  'image/tiff': 'image',
  'image/webp': 'image',
};
/** Every extension the detector reads by name, and as what (the converse of the message's list). */
export const READ_BY_EXTENSION: Readonly<Record<string, Format>> = BY_EXTENSION;

/** Formats read from a ZIP container: the archive is counted by zip.inspector.ts first. */
export const ZIP_FORMATS: ReadonlySet<Format> = new Set([
  'docx',
  'xlsx',
  'pptx',
  'odt',
  'ods',
  'odp',
  'epub',
]);
/** Formats whose content has its own magic bytes: declared or named so, the content must agree. */
const BINARY: ReadonlySet<Format> = new Set(['pdf', 'rtf', 'image', 'doc', ...ZIP_FORMATS]);

/** What every branch below reads, for the `unsupported_type` message and the README. */
export const SUPPORTED_FORMATS =
  'text, Markdown, HTML, CSV, TSV, JSON, XML, source code, PDF, DOC, DOCX, XLSX, PPTX, ODT, ODS, ODP, EPUB, RTF, EML, PNG, JPEG, TIFF or WebP';

/** Magic bytes of the image formats OCR reads (PNG, JPEG, TIFF both byte orders, WebP). */
function isImage(body: Buffer): boolean {
  const head = body.toString('latin1', 0, 4);
  return (
    head === '\x89PNG' ||
    (body[0] === 0xff && body[1] === 0xd8 && body[2] === 0xff) ||
    head === 'II*\x00' ||
    head === 'MM\x00*' ||
    (head === 'RIFF' && body.toString('latin1', 8, 12) === 'WEBP')
  );
}

/**
 * What the first bytes say the content is, when they say anything. OpenDocument and EPUB archives
 * begin with a stored `mimetype` entry naming their type, so they are known without a name.
 */
function sniff(body: Buffer): Format | 'zip' | 'compound' | undefined {
  if (body.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (body.subarray(0, 5).toString('latin1') === '{\\rtf') return 'rtf';
  if (isImage(body)) return 'image';
  if (body.subarray(0, 8).equals(COMPOUND_FILE_MAGIC)) return 'compound';
  if (body.length < 4 || body.readUInt32BE(0) !== 0x504b0304) return undefined;
  if (body.length >= 38 && body.toString('latin1', 30, 38) === 'mimetype') {
    const length = body.readUInt32LE(18);
    const declared = BY_MIME[body.toString('latin1', 38, 38 + Math.min(length, 100))];
    if (declared && ZIP_FORMATS.has(declared)) return declared;
  }
  return 'zip';
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
  if (magic === 'compound') {
    // Word 97-2003 is read; the other legacy Office files share its container and are not.
    if (named === 'doc' || declared === 'doc') return { format: 'doc' };
    throw new ExtractionError(
      'unsupported_type',
      `"${input.filename}" is a legacy Office file other than DOC (PPT, XLS or MSG are not read: save it as PPTX, XLSX or EML)`,
    );
  }
  if (magic && magic !== 'zip') return { format: magic };
  if (magic === 'zip') {
    const zipped = [named, declared].find((format) => format && ZIP_FORMATS.has(format));
    if (zipped) return { format: zipped };
  }
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
    `"${input.filename}" (${input.contentType}) is not a supported type: ${SUPPORTED_FORMATS}`,
  );
}
