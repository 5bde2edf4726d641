import { PermanentError } from '@kb/kafka';
import { parse as parseCsv } from 'csv-parse/sync';
import { Parser as HtmlParser } from 'htmlparser2';

export interface ExtractInput {
  filename: string;
  contentType: string;
  body: Buffer;
}

export type Format = 'text' | 'markdown' | 'html' | 'csv' | 'json' | 'code' | 'pdf' | 'docx';

export interface Extracted {
  text: string;
  format: Format;
  /** Where each page starts and ends in `text` (PDF only). */
  pages?: Array<{ page: number; start: number; end: number }>;
  /** The document's own title when the format carries one (HTML <title>, PDF info). */
  title?: string;
  /** Source language, for code. */
  language?: string;
}

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
/** A DOCX is a ZIP archive; its XML is inflated to at most this (decompression bombs). */
const MAX_DOCX_INFLATED_BYTES = 64 * 1024 * 1024;

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
    throw new PermanentError(
      'type_mismatch',
      `"${input.filename}" is declared ${claimed.toUpperCase()} but its content is not`,
    );
  }
  if (magic === 'zip') {
    throw new PermanentError('unsupported_type', `"${input.filename}" is an archive`);
  }
  const language = CODE_LANGUAGES[extension];
  if (named && named !== 'text') return { format: named };
  if (language) return { format: 'code', language };
  if (declared) return { format: declared };
  if (named === 'text' || input.contentType.startsWith('text/')) return { format: 'text' };
  throw new PermanentError(
    'unsupported_type',
    `"${input.filename}" (${input.contentType}) is not a supported type: text, Markdown, HTML, CSV, JSON, source code, PDF or DOCX`,
  );
}

/**
 * Extracts a document's text in its structure's reading order. Malformed or encrypted files,
 * decompression bombs and files with no text fail with a reason code, never a crash.
 */
export async function extractText(input: ExtractInput): Promise<Extracted> {
  const { format, language } = detectFormat(input);
  const extracted =
    format === 'pdf'
      ? await extractPdf(input)
      : format === 'docx'
        ? await extractDocx(input)
        : extractTextual(input, format);
  if (!/\S/.test(extracted.text)) {
    throw new PermanentError('no_text', `"${input.filename}" has no extractable text`);
  }
  return { ...extracted, ...(language ? { language } : {}) };
}

function decodeUtf8(input: ExtractInput): string {
  if (input.body.includes(0)) {
    throw new PermanentError('unsupported_type', `"${input.filename}" is binary, not text`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(input.body);
  } catch {
    throw new PermanentError('unsupported_type', `"${input.filename}" is not valid UTF-8 text`);
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

const BLOCK_TAGS = new Set([
  'p',
  'div',
  'section',
  'article',
  'li',
  'tr',
  'br',
  'table',
  'ul',
  'ol',
  'pre',
  'blockquote',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
]);
const SKIPPED_TAGS = new Set(['script', 'style', 'noscript', 'template', 'head']);

/**
 * Visible text of an HTML page with its structure kept as Markdown-like lines: headings become
 * `#` lines (so the heading-aware chunker sees them), blocks become paragraphs, scripts and styles
 * go. The <title> is returned apart.
 */
export function htmlToText(html: string): { text: string; title?: string } {
  const out: string[] = [];
  let skipping = 0;
  let inTitle = false;
  let title = '';
  const parser = new HtmlParser(
    {
      onopentag(name) {
        if (name === 'title') inTitle = true;
        else if (SKIPPED_TAGS.has(name)) skipping++;
        else if (/^h[1-6]$/.test(name)) out.push(`\n\n${'#'.repeat(Number(name[1]))} `);
        else if (BLOCK_TAGS.has(name)) out.push('\n\n');
      },
      ontext(text) {
        if (inTitle) title += text;
        else if (skipping === 0) out.push(text.replace(/\s+/g, ' '));
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        else if (SKIPPED_TAGS.has(name)) skipping = Math.max(0, skipping - 1);
        else if (BLOCK_TAGS.has(name)) out.push('\n\n');
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  const text = out
    .join('')
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const cleanTitle = title.replace(/\s+/g, ' ').trim();
  return { text, ...(cleanTitle ? { title: cleanTitle } : {}) };
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
    throw new PermanentError('parse_error', `"${filename}" is not valid CSV: ${String(error)}`);
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
    throw new PermanentError('parse_error', `"${filename}" is not valid JSON: ${String(error)}`);
  }
}

async function extractPdf(input: ExtractInput): Promise<Extracted> {
  const { PDFParse } = await import('pdf-parse');
  const parser = new PDFParse({ data: new Uint8Array(input.body) });
  try {
    const result = await parser.getText();
    const info = await parser.getInfo().catch(() => undefined);
    const pages: Array<{ page: number; start: number; end: number }> = [];
    let text = '';
    for (const page of result.pages) {
      if (text) text += '\n\n';
      const start = text.length;
      text += page.text;
      pages.push({ page: page.num, start, end: text.length });
    }
    const title = typeof info?.info?.Title === 'string' ? info.info.Title.trim() : '';
    return { text, format: 'pdf', pages, ...(title ? { title } : {}) };
  } catch (error) {
    const name = (error as { name?: string }).name ?? '';
    if (name === 'PasswordException') {
      throw new PermanentError('encrypted', `"${input.filename}" is encrypted`);
    }
    throw new PermanentError(
      'parse_error',
      `"${input.filename}" is not a readable PDF: ${String(error)}`,
    );
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}

async function extractDocx(input: ExtractInput): Promise<Extracted> {
  const JSZip = (await import('jszip')).default;
  let inflated = 0;
  try {
    // Sizes from the archive's own directory, before anything is inflated.
    const zip = await JSZip.loadAsync(input.body);
    zip.forEach((_path, file) => {
      inflated +=
        (file as unknown as { _data?: { uncompressedSize?: number } })._data?.uncompressedSize ?? 0;
    });
  } catch (error) {
    throw new PermanentError(
      'parse_error',
      `"${input.filename}" is not a readable DOCX: ${String(error)}`,
    );
  }
  if (inflated > MAX_DOCX_INFLATED_BYTES) {
    throw new PermanentError(
      'parse_error',
      `"${input.filename}" inflates to ${inflated} bytes, over the ${MAX_DOCX_INFLATED_BYTES} limit`,
    );
  }
  const mammoth = await import('mammoth');
  try {
    const { value } = await mammoth.convertToHtml({ buffer: input.body });
    return { ...htmlToText(value), format: 'docx' };
  } catch (error) {
    throw new PermanentError(
      'parse_error',
      `"${input.filename}" is not a readable DOCX: ${String(error)}`,
    );
  }
}
