import {
  type ExtractedText,
  extractedTextIndexSchema,
  textLayoutOf,
  textRangeOf,
} from './extracted-text';

const extracted = (text: string): ExtractedText => ({
  documentId: '6f1c1b7e-3f6a-4d1e-9a39-2b1f1c1d2e3f',
  version: 1,
  format: 'markdown',
  text,
  pages: [],
  headings: [{ start: 0, level: 1, text: 'T' }],
});

/** What a reader does: the range's bytes, decoded, sliced to the window. */
function windowOf(text: string, blockUnits: number, start: number, end: number): string {
  const { body, index } = textLayoutOf(extracted(text), blockUnits);
  const range = textRangeOf(index, start, end);
  if (!range) return '';
  const decoded = body.subarray(range.startByte, range.endByte).toString('utf8');
  return decoded.slice(start - range.firstUnit, end - range.firstUnit);
}

describe('the stored layout of an extracted text (review N6)', () => {
  it('indexes blocks by code unit and byte, and keeps the maps beside them', () => {
    const { body, index } = textLayoutOf(extracted('abcdéfghij'), 4);
    expect(body.toString('utf8')).toBe('abcdéfghij');
    expect(index).toMatchObject({
      length: 10,
      format: 'markdown',
      headings: [{ start: 0, level: 1, text: 'T' }],
      blocks: [
        [0, 0],
        [4, 4],
        [8, 9],
        [10, 11],
      ],
    });
    expect(extractedTextIndexSchema.parse(index)).toEqual(index);
    expect('text' in index).toBe(false);
  });

  it('reads any window from at most the blocks around it, multi-byte characters included', () => {
    const text = 'Zürich — 東京 😀 ok\n'.repeat(7);
    for (const blockUnits of [1, 2, 3, 5, 16, 1000]) {
      const { index } = textLayoutOf(extracted(text), blockUnits);
      for (let start = 0; start <= text.length; start += 3) {
        for (const size of [1, 2, 7, 40]) {
          const end = Math.min(start + size, text.length);
          expect(windowOf(text, blockUnits, start, end)).toBe(text.slice(start, end));
          const range = textRangeOf(index, start, end);
          if (range) {
            // Never more than one block (plus a surrogate pair) either side of the window.
            expect(start - range.firstUnit).toBeLessThanOrEqual(blockUnits + 1);
          }
        }
      }
    }
  });

  it('never splits a surrogate pair across blocks', () => {
    const text = 'a😀b😀😀c';
    for (const blockUnits of [1, 2, 3]) {
      const { index } = textLayoutOf(extracted(text), blockUnits);
      for (const [unit] of index.blocks.slice(1, -1)) {
        const code = text.charCodeAt(unit);
        expect(code >= 0xdc00 && code <= 0xdfff).toBe(false);
      }
      expect(windowOf(text, blockUnits, 0, text.length)).toBe(text);
    }
  });

  it('keeps offsets when the text holds a lone surrogate (stored as U+FFFD)', () => {
    const text = 'ab\ud800cd';
    expect(windowOf(text, 2, 3, 5)).toBe('cd');
    expect(windowOf(text, 2, 2, 3)).toBe('\ufffd');
  });

  it('has one block boundary for an empty text, and no range for an empty window', () => {
    const { body, index } = textLayoutOf(extracted(''));
    expect(body.length).toBe(0);
    expect(index.blocks).toEqual([[0, 0]]);
    expect(textRangeOf(index, 0, 0)).toBeUndefined();
  });
});
