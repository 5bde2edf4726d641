import { PermanentError } from '@kb/kafka';

export interface ExtractInput {
  filename: string;
  contentType: string;
  body: Buffer;
}

export interface Extracted {
  text: string;
  format: 'text' | 'markdown';
}

const MARKDOWN_EXTENSIONS = new Set(['md', 'markdown', 'mdx']);
const TEXT_EXTENSIONS = new Set(['txt', 'text', 'log']);

/**
 * Extracts text from plain text and Markdown. Binary content (NUL bytes, invalid UTF-8) is
 * rejected as `unsupported_type`, and text with no visible characters as `no_text`.
 */
export function extractText(input: ExtractInput): Extracted {
  const extension = input.filename.toLowerCase().split('.').pop() ?? '';
  const format =
    MARKDOWN_EXTENSIONS.has(extension) || input.contentType === 'text/markdown'
      ? 'markdown'
      : TEXT_EXTENSIONS.has(extension) || input.contentType.startsWith('text/')
        ? 'text'
        : undefined;
  if (!format) {
    throw new PermanentError(
      'unsupported_type',
      `"${input.filename}" (${input.contentType}) is not a supported type: plain text or Markdown`,
    );
  }
  if (input.body.includes(0)) {
    throw new PermanentError('unsupported_type', `"${input.filename}" is binary, not text`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(input.body);
  } catch {
    throw new PermanentError('unsupported_type', `"${input.filename}" is not valid UTF-8 text`);
  }
  if (!/\S/.test(text)) {
    throw new PermanentError('no_text', `"${input.filename}" has no extractable text`);
  }
  return { text, format };
}
