import { gluedCounter } from '../../test/fixtures/chunking.fixtures';
import { MAX_CHARS_PER_TOKEN, tokenChunkSpans } from './token.chunker';
import { wordCounter } from './token.counter';

const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

describe('tokenChunkSpans', () => {
  it('packs words up to the size and overlaps by whole words', async () => {
    const text = words(100);
    const spans = await tokenChunkSpans(text, { size: 20, overlap: 5 }, wordCounter);
    const chunks = spans.map((s) => text.slice(s.start, s.end).split(' '));
    expect(chunks[0]).toEqual(words(20).split(' '));
    for (let i = 1; i < chunks.length; i++) {
      expect(chunks[i]!.slice(0, 5)).toEqual(chunks[i - 1]!.slice(-5));
      expect(chunks[i]!.length).toBeLessThanOrEqual(20);
    }
    expect(chunks[chunks.length - 1]!.at(-1)).toBe('w99');
    expect(spans.map((s) => s.tokenCount)).toEqual(chunks.map((c) => c.length));
  });

  it('counts every chunk on its own text, shrinking it when word sums fall short', async () => {
    const text = words(60);
    const spans = await tokenChunkSpans(text, { size: 20, overlap: 6 }, gluedCounter);
    for (const span of spans) {
      expect(span.tokenCount).toBe(gluedCounter.count(text.slice(span.start, span.end)));
      expect(span.tokenCount).toBeLessThanOrEqual(20);
      // 9 words are 2 + 17 = 19 tokens; 10 would be 21.
      expect(text.slice(span.start, span.end).split(' ').length).toBeLessThanOrEqual(9);
    }
    for (let i = 1; i < spans.length; i++) {
      const repeated = text.slice(spans[i]!.start, Math.max(spans[i]!.start, spans[i - 1]!.end));
      expect(gluedCounter.countPiece(repeated)).toBeLessThanOrEqual(6);
    }
  });

  it('cuts a word longer than a chunk may be at characters', async () => {
    const text = `start ${'x'.repeat(1000)} end`;
    const spans = await tokenChunkSpans(text, { size: 16, overlap: 0 }, wordCounter);
    for (const span of spans)
      expect(span.end - span.start).toBeLessThanOrEqual(16 * MAX_CHARS_PER_TOKEN);
    expect(spans.map((s) => text.slice(s.start, s.end).replace(/ /g, '')).join('')).toBe(
      text.replace(/ /g, ''),
    );
    expect(spans.length).toBeGreaterThan(1000 / (16 * MAX_CHARS_PER_TOKEN));
  });

  it('refuses a size the special tokens alone fill', async () => {
    const special = { ...wordCounter, count: (t: string) => 16 + wordCounter.count(t) };
    await expect(tokenChunkSpans('a b', { size: 16, overlap: 0 }, special)).rejects.toThrow(
      /special tokens/,
    );
  });
});
