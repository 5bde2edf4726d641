import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { ExtractionError } from './extraction.errors';
import type { Extracted, ExtractInput } from './extraction.model';
import { TextBuilder } from './text.builder';

/** RTF names its code pages `cpNNNN`, which are WHATWG labels for the common ones; else Latin-1. */
function decode(bytes: Buffer, encoding: string): string {
  try {
    return new TextDecoder(encoding).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

/**
 * A CommonJS module through import(): Node gives it as `default` (and names what it can detect),
 * Jest's CommonJS runtime gives the module itself.
 */
const commonJs = <T extends object>(module: T): T => (module as { default?: T }).default ?? module;

/**
 * RTF's text (rtf-stream-parser: its tokenizer and its plain-text processor, which skips the
 * font, colour and style tables and `\*` destinations and decodes `\'hh` in the document's code
 * page and `\uN`), one block per paragraph (`\par`).
 */
export async function extractRtf(input: ExtractInput): Promise<Extracted> {
  const { Tokenize } = commonJs(await import('rtf-stream-parser'));
  // Not exported from the package's index; the path is pinned by the exact version in the lock.
  const { ToPlainText } = commonJs(await import('rtf-stream-parser/dist/src/ToPlainText.js'));
  const parts: string[] = [];
  try {
    await pipeline(
      Readable.from([input.body]),
      new Tokenize(),
      new ToPlainText({ decode, encode: (text: string) => Buffer.from(text) }),
      new Writable({
        objectMode: true,
        write(chunk: string | Buffer, _encoding, done) {
          parts.push(chunk.toString());
          done();
        },
      }),
    );
  } catch (error) {
    throw new ExtractionError(
      'parse_error',
      `"${input.filename}" is not readable RTF: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const out = new TextBuilder();
  for (const line of parts.join('').split(/\r\n?|\n/)) out.block(line.replace(/[ \t]+/g, ' '));
  return { text: out.result().text, format: 'rtf' };
}
