import * as CFB from 'cfb';

import { ExtractionError } from './extraction.errors';
import type { Extracted, ExtractInput } from './extraction.model';
import { TextBuilder } from './text.builder';

/** The first bytes of an OLE compound file: Word 97-2003, and also legacy PPT, XLS and Outlook MSG. */
export const COMPOUND_FILE_MAGIC = Buffer.from('d0cf11e0a1b11ae1', 'hex');

/** `fEncrypted` in the FIB's flags ([MS-DOC] 2.5.2, FibBase at 0x0A). */
const ENCRYPTED = 0x0100;

/** The WordDocument stream's FIB flags, read with cfb (SheetJS); undefined when there is none. */
function fibFlags(body: Buffer): number | undefined {
  const stream = CFB.find(CFB.read(body, { type: 'buffer' }), 'WordDocument');
  const content = stream?.content as Uint8Array | undefined;
  if (!content || content.length < 12) return undefined;
  return Buffer.from(content.buffer, content.byteOffset, content.length).readUInt16LE(0x0a);
}

/**
 * A Word 97-2003 binary document's text (word-extractor: its own compound-file reader and piece
 * table, pure JavaScript): the body paragraph by paragraph, then footnotes, endnotes, comments,
 * text boxes and headers as blocks of their own. The format keeps no page layout, so hits carry
 * no page. Encrypted files fail `encrypted`; anything unreadable `parse_error`.
 */
export async function extractDoc(input: ExtractInput): Promise<Extracted> {
  const { default: WordExtractor } = await import('word-extractor');
  let document: Awaited<ReturnType<InstanceType<typeof WordExtractor>['extract']>>;
  try {
    const flags = fibFlags(input.body);
    if (flags === undefined) throw new Error('no WordDocument stream');
    if (flags & ENCRYPTED) {
      throw new ExtractionError('encrypted', `"${input.filename}" is an encrypted DOC`);
    }
    document = await new WordExtractor().extract(input.body);
  } catch (error) {
    if (error instanceof ExtractionError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new ExtractionError(
      'parse_error',
      `"${input.filename}" is not a readable DOC: ${message}`,
    );
  }
  const out = new TextBuilder();
  const parts = [
    document.getBody(),
    document.getFootnotes(),
    document.getEndnotes(),
    document.getAnnotations(),
    document.getTextboxes({ includeHeadersAndFooters: false, includeBody: true }),
    document.getHeaders({ includeFooters: true }),
  ];
  for (const part of parts) {
    for (const paragraph of part.split('\n')) out.block(paragraph.replace(/[ \t]+/g, ' '));
  }
  return { text: out.result().text, format: 'doc' };
}
