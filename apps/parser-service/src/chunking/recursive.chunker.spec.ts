import { recursiveChunkSpans } from './recursive.chunker';
import { hardCut, safeCut } from './spans.util';

const paragraph = (n: number): string =>
  `Paragraph ${n} talks about topic ${n}. It has a second sentence about item ${n * 7}. ` +
  `And a third sentence that makes it longer, mentioning number ${n * 13}.`;

describe('recursiveChunkSpans', () => {
  const text = Array.from({ length: 30 }, (_, i) => paragraph(i)).join('\n\n');

  it('overlaps consecutive chunks by whole pieces, at most the overlap, and keeps them in order', () => {
    // Paragraphs (~140 chars) exceed 100, so they split into sentences of 35-65 chars; an overlap of 60 repeats one.
    const spans = recursiveChunkSpans(text, { size: 100, overlap: 60 });
    for (let i = 1; i < spans.length; i++) {
      expect(spans[i]!.start).toBeGreaterThan(spans[i - 1]!.start);
      expect(Math.max(0, spans[i - 1]!.end - spans[i]!.start)).toBeLessThanOrEqual(60);
    }
    expect(spans.some((s, i) => i > 0 && s.start < spans[i - 1]!.end)).toBe(true);
  });

  it('prefers paragraph boundaries when paragraphs fit', () => {
    const spans = recursiveChunkSpans(text, { size: 400, overlap: 0 });
    for (const span of spans) expect(text.slice(span.start, span.end)).toMatch(/^Paragraph \d+/);
  });

  it('splits at the configured separators, in order, before cutting hard', () => {
    const csv = Array.from({ length: 20 }, (_, i) => `row ${i}; value ${i * 3}; note`).join(' | ');
    const spans = recursiveChunkSpans(csv, { size: 60, overlap: 0, separators: [' | ', '; '] });
    for (const span of spans) {
      expect(csv.slice(span.start, span.end)).toMatch(
        /^row \d+; value \d+; note( \| row \d+; value \d+; note)*( \|)?$/,
      );
    }
  });

  it('hard-cuts a long run without separators', () => {
    const run = 'x'.repeat(1000);
    const spans = recursiveChunkSpans(run, { size: 300, overlap: 0 });
    expect(spans.map((s) => s.end - s.start)).toEqual([300, 300, 300, 100]);
  });

  it('returns nothing for whitespace-only text and one trimmed chunk for short text', () => {
    expect(recursiveChunkSpans('  \n\n  ', { size: 100, overlap: 10 })).toEqual([]);
    expect(recursiveChunkSpans('  hello  ', { size: 100, overlap: 10 })).toEqual([
      { start: 2, end: 7 },
    ]);
  });

  it('rejects an overlap not smaller than the size', () => {
    expect(() => recursiveChunkSpans('abc', { size: 10, overlap: 10 })).toThrow(/overlap/);
  });
});

describe('hard cuts', () => {
  it('never split an emoji with its modifiers or a letter from its accent', () => {
    const family = '👨‍👩‍👧‍👦'; // 11 UTF-16 units, one grapheme
    const text = `ab${family}cd`;
    expect(safeCut(text, 5, 0)).toBe(2);
    expect(
      hardCut(text, { start: 0, end: text.length }, 11).map((s) => text.slice(s.start, s.end)),
    ).toEqual(['ab', family, 'cd']);
    const accented = 'e\u0301'.repeat(5);
    expect(hardCut(accented, { start: 0, end: 10 }, 3).map((s) => s.end - s.start)).toEqual([
      2, 2, 2, 2, 2,
    ]);
  });

  it('fall back to code points when one grapheme is longer than the size', () => {
    const zalgo = `a${'\u0301'.repeat(20)}`;
    const pieces = hardCut(zalgo, { start: 0, end: zalgo.length }, 8);
    expect(pieces.map((s) => s.end - s.start)).toEqual([8, 8, 5]);
  });
});
