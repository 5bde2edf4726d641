import * as CFB from 'cfb';

/**
 * Offsets in a Word 97 File Information Block ([MS-DOC] 2.5.1, FibBase, FibRgLw97 and
 * FibRgFcLcb97): the main text's length in characters, and the piece table (`Clx`) in the table
 * stream.
 */
const FIB = { ident: 0x00, nFib: 0x02, flags: 0x0a, ccpText: 0x4c, fcClx: 0x1a2, lcbClx: 0x1a6 };
/** `fWhichTblStm`: the table stream is `1Table`. */
const TABLE_1 = 0x0200;
/** Where the text starts in the WordDocument stream, after the FIB. */
const TEXT_AT = 0x800;
/** `fCompressed` in a piece's file offset: 8-bit characters (cp1252) at half the offset. */
const COMPRESSED = 0x40000000;

/**
 * A Word 97-2003 binary document (.doc) holding `paragraphs`, for tests and benches of the DOC
 * reader: the compound file is written by `cfb` (SheetJS), the WordDocument and 1Table streams
 * are the smallest [MS-DOC] layout Word's readers accept, one piece of 8-bit text and no
 * formatting. No JavaScript library writes .doc; this stays out of the parser under test.
 */
export function word97(paragraphs: string[]): Buffer {
  const text = Buffer.from(paragraphs.map((p) => `${p}\r`).join(''), 'latin1');
  const document = Buffer.alloc(TEXT_AT + text.length);
  document.writeUInt16LE(0xa5ec, FIB.ident);
  document.writeUInt16LE(0x00c1, FIB.nFib);
  document.writeUInt16LE(TABLE_1, FIB.flags);
  document.writeUInt32LE(text.length, FIB.ccpText);
  text.copy(document, TEXT_AT);

  // Clx: one Pcdt (0x02, its size, a PlcPcd of two character positions and one 8-byte Pcd).
  const table = Buffer.alloc(1 + 4 + 8 + 8);
  table.writeUInt8(0x02, 0);
  table.writeUInt32LE(16, 1);
  table.writeUInt32LE(0, 5);
  table.writeUInt32LE(text.length, 9);
  table.writeUInt16LE(0, 13);
  table.writeUInt32LE(((TEXT_AT * 2) | COMPRESSED) >>> 0, 15);
  table.writeUInt16LE(0, 19);
  document.writeUInt32LE(0, FIB.fcClx);
  document.writeUInt32LE(table.length, FIB.lcbClx);

  const container = CFB.utils.cfb_new();
  CFB.utils.cfb_add(container, '/WordDocument', document);
  CFB.utils.cfb_add(container, '/1Table', table);
  return Buffer.from(CFB.write(container, { type: 'buffer' }) as Uint8Array);
}
