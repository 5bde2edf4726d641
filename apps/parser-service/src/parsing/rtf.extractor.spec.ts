import { extract, reasonOf, upload } from '../../test/fixtures/extraction.fixtures';

const memo = String.raw`{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Times;}}{\colortbl;\red0\green0\blue0;}{\*\generator Writer;}\pard\b Harbour memo\b0\par Caf\'e9 \u8212? the kittiwake nests\par\tab Low water}`;

describe('RTF extraction', () => {
  it('reads paragraphs as blocks, code-page bytes and Unicode escapes decoded, tables dropped', async () => {
    expect(await extract(upload('memo.rtf', memo))).toEqual({
      text: 'Harbour memo\n\nCafé — the kittiwake nests\n\nLow water',
      format: 'rtf',
    });
  });

  it('knows RTF by its first bytes, and a declared RTF that is not fails type_mismatch', async () => {
    expect((await extract(upload('upload', memo))).format).toBe('rtf');
    expect(await reasonOf(extract(upload('x', 'plain words', 'application/rtf')))).toBe(
      'type_mismatch',
    );
  });

  it('fails a truncated file with a reason, and reads one with extra closing braces', async () => {
    expect(String(await reasonOf(extract(upload('cut.rtf', memo.slice(0, 40)))))).toMatch(
      /^(parse_error|no_text)$/,
    );
    expect(String(await reasonOf(extract(upload('bad.rtf', `${memo}}}}`))))).toMatch(
      /^(parse_error|undefined)$/,
    );
  });
});
