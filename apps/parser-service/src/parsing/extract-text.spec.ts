import { PermanentError } from '@kb/kafka';
import { extractText } from './extract-text';

const input = (
  filename: string,
  body: string | Buffer,
  contentType = 'application/octet-stream',
) => ({
  filename,
  contentType,
  body: typeof body === 'string' ? Buffer.from(body) : body,
});

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof PermanentError ? error.reason : 'not-permanent';
  }
  return undefined;
}

describe('extractText', () => {
  it('reads Markdown and plain text as UTF-8, by extension or declared type', () => {
    expect(extractText(input('a.md', '# Título\n\nçà'))).toEqual({
      text: '# Título\n\nçà',
      format: 'markdown',
    });
    expect(extractText(input('notes', 'hello', 'text/plain')).format).toBe('text');
    expect(extractText(input('notes.txt', 'hello')).text).toBe('hello');
  });

  it('rejects unsupported types, binary and invalid UTF-8 as unsupported_type', () => {
    expect(reasonOf(() => extractText(input('a.exe', 'MZ')))).toBe('unsupported_type');
    expect(reasonOf(() => extractText(input('a.txt', Buffer.from([104, 0, 105]))))).toBe(
      'unsupported_type',
    );
    expect(reasonOf(() => extractText(input('a.txt', Buffer.from([0xc3, 0x28]))))).toBe(
      'unsupported_type',
    );
  });

  it('rejects whitespace-only text as no_text', () => {
    expect(reasonOf(() => extractText(input('a.txt', ' \n\t ')))).toBe('no_text');
  });
});
