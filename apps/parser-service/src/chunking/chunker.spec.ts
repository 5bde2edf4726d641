import { recursiveChunkSpans, toChunks } from './chunker';

const paragraph = (n: number): string =>
  `Paragraph ${n} talks about topic ${n}. It has a second sentence about item ${n * 7}. ` +
  `And a third sentence that makes it longer, mentioning number ${n * 13}.`;

describe('recursiveChunkSpans', () => {
  const text = Array.from({ length: 30 }, (_, i) => paragraph(i)).join('\n\n');

  it.each([
    [200, 0],
    [200, 50],
    [120, 30],
    [500, 100],
    [64, 16],
  ])('slicing by offsets returns each chunk exactly (size %i, overlap %i)', (size, overlap) => {
    const chunks = toChunks(
      text,
      recursiveChunkSpans(text, { chunkSize: size, chunkOverlap: overlap }),
    );
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(text.slice(chunk.start, chunk.end)).toBe(chunk.text);
      expect(chunk.text.length).toBeLessThanOrEqual(size);
      expect(chunk.text).toBe(chunk.text.trim());
    }
  });

  it('covers every non-space character of the text', () => {
    const spans = recursiveChunkSpans(text, { chunkSize: 150, chunkOverlap: 40 });
    const covered = new Array<boolean>(text.length).fill(false);
    for (const span of spans) for (let i = span.start; i < span.end; i++) covered[i] = true;
    const missed = [...text].filter((ch, i) => !covered[i] && /\S/.test(ch));
    expect(missed).toEqual([]);
  });

  it('overlaps consecutive chunks by at most the overlap and keeps them in order', () => {
    // Paragraphs (~140 chars) exceed 100, so they split into sentences of 35-65 chars; an overlap of 60 repeats one.
    const spans = recursiveChunkSpans(text, { chunkSize: 100, chunkOverlap: 60 });
    for (let i = 1; i < spans.length; i++) {
      expect(spans[i]!.start).toBeGreaterThan(spans[i - 1]!.start);
      expect(Math.max(0, spans[i - 1]!.end - spans[i]!.start)).toBeLessThanOrEqual(60);
    }
    expect(spans.some((s, i) => i > 0 && s.start < spans[i - 1]!.end)).toBe(true);
  });

  it('prefers paragraph boundaries when paragraphs fit', () => {
    const spans = recursiveChunkSpans(text, { chunkSize: 400, chunkOverlap: 0 });
    for (const span of spans) expect(text.slice(span.start, span.end)).toMatch(/^Paragraph \d+/);
  });

  it('hard-cuts a long run without separators', () => {
    const run = 'x'.repeat(1000);
    const spans = recursiveChunkSpans(run, { chunkSize: 300, chunkOverlap: 0 });
    expect(spans.map((s) => s.end - s.start)).toEqual([300, 300, 300, 100]);
  });

  it('returns nothing for whitespace-only text and one chunk for short text', () => {
    expect(recursiveChunkSpans('  \n\n  ', { chunkSize: 100, chunkOverlap: 10 })).toEqual([]);
    expect(recursiveChunkSpans('  hello  ', { chunkSize: 100, chunkOverlap: 10 })).toEqual([
      { start: 2, end: 7 },
    ]);
  });

  it('rejects an overlap not smaller than the size', () => {
    expect(() => recursiveChunkSpans('abc', { chunkSize: 10, chunkOverlap: 10 })).toThrow(
      /chunkOverlap/,
    );
  });
});
