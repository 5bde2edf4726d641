import { createHash } from 'node:crypto';

import { type Chunk, type ChunkerConfig, chunkerConfigSchema } from '@kb/contracts';

import {
  expectedGuidePath,
  gluedCounter,
  GUIDE,
  VARIED_TEXTS,
} from '../../test/fixtures/chunking.fixtures';
import { chunkDocument } from './document.chunker';
import { markdownHeadings } from './headings.parser';
import { type TokenCounter, wordCounter } from './token.counter';

/** Every chunker, at sizes small enough to make many chunks of the fixtures, as the schema parses them. */
const CONFIGS: Array<[string, ChunkerConfig, TokenCounter]> = (
  [
    [{ strategy: 'recursive', size: 100, overlap: 30 }, wordCounter],
    [{ strategy: 'recursive', size: 250, overlap: 0 }, wordCounter],
    [{ strategy: 'recursive', size: 120, overlap: 60, separators: ['\n', ' '] }, wordCounter],
    [{ strategy: 'sentence', size: 100, overlap: 40 }, wordCounter],
    [{ strategy: 'sentence', size: 300, overlap: 0 }, wordCounter],
    [{ strategy: 'paragraph', size: 100 }, wordCounter],
    [{ strategy: 'paragraph', size: 400 }, wordCounter],
    [{ strategy: 'markdown', size: 150, overlap: 40, headingLevel: 2 }, wordCounter],
    [{ strategy: 'markdown', size: 300, overlap: 100, headingLevel: 6 }, wordCounter],
    [{ strategy: 'token', size: 24, overlap: 6 }, wordCounter],
    [{ strategy: 'token', size: 64, overlap: 0 }, wordCounter],
    [{ strategy: 'token', size: 20, overlap: 7 }, gluedCounter],
  ] as Array<[unknown, TokenCounter]>
).map(([raw, counter]) => {
  const config = chunkerConfigSchema.parse(raw);
  return [`${JSON.stringify(raw)} (${counter.unit})`, config, counter];
});

const chunk = (text: string, config: ChunkerConfig, tokens: TokenCounter): Promise<Chunk[]> =>
  chunkDocument({ text, headings: markdownHeadings(text) }, config, tokens);

const splitsSurrogatePair = (text: string, at: number): boolean =>
  /[\uDC00-\uDFFF]/.test(text[at] ?? '') && /[\uD800-\uDBFF]/.test(text[at - 1] ?? '');

/** How much of `current` repeats the end of `previous`, in the chunker's unit. */
function overlapOf(
  previous: Chunk,
  current: Chunk,
  text: string,
  tokens: TokenCounter,
  config: ChunkerConfig,
): number {
  if (current.start >= previous.end) return 0;
  const repeated = text.slice(current.start, previous.end);
  return config.strategy === 'token' ? tokens.countPiece(repeated) : repeated.length;
}

describe.each(CONFIGS)('chunker %s', (_name, config, tokens) => {
  describe.each(Object.entries(VARIED_TEXTS))('on %s', (_text, text) => {
    let chunks: Chunk[];
    beforeAll(async () => {
      chunks = await chunk(text, config, tokens);
    });

    it('gives each chunk back when the text is sliced by its offsets, overlap included', () => {
      for (const c of chunks) {
        expect(text.slice(c.start, c.end)).toBe(c.text);
        expect(c.text).not.toBe('');
        expect(c.text).toBe(c.text.trim());
        expect(c.sha256).toBe(createHash('sha256').update(c.text).digest('hex'));
      }
    });

    it('numbers chunks 0..n-1 in text order, each starting and ending after the one before', () => {
      expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
      for (let i = 1; i < chunks.length; i++) {
        expect(chunks[i]!.start).toBeGreaterThan(chunks[i - 1]!.start);
        expect(chunks[i]!.end).toBeGreaterThan(chunks[i - 1]!.end);
      }
    });

    it('keeps every chunk within the size and counts its tokens', () => {
      for (const c of chunks) {
        expect(c.tokenCount).toBe(tokens.count(c.text));
        if (config.strategy === 'token') expect(c.tokenCount).toBeLessThanOrEqual(config.size);
        else expect(c.text.length).toBeLessThanOrEqual(config.size);
      }
    });

    it('overlaps consecutive chunks by at most the configured overlap', () => {
      const allowed = config.strategy === 'paragraph' ? 0 : config.overlap;
      for (let i = 1; i < chunks.length; i++) {
        expect(overlapOf(chunks[i - 1]!, chunks[i]!, text, tokens, config)).toBeLessThanOrEqual(
          allowed,
        );
      }
    });

    it('covers every non-whitespace character', () => {
      const covered = new Uint8Array(text.length);
      for (const c of chunks) covered.fill(1, c.start, c.end);
      const missed = [...text.matchAll(/\S/g)].filter((m) => covered[m.index] === 0);
      expect(missed.map((m) => `${m[0]} at ${m.index}`)).toEqual([]);
      if (!/\S/.test(text)) expect(chunks).toEqual([]);
    });

    it('never cuts a surrogate pair (an emoji, a rare CJK character) in two', () => {
      for (const c of chunks) {
        expect(splitsSurrogatePair(text, c.start)).toBe(false);
        expect(splitsSurrogatePair(text, c.end)).toBe(false);
      }
    });
  });

  it('gives each chunk of the hand-built guide the heading path in force where it starts', async () => {
    const chunks = await chunk(GUIDE, config, tokens);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks)
      expect({ start: c.start, path: c.headingPath }).toEqual({
        start: c.start,
        path: expectedGuidePath(c.start),
      });
    expect(new Set(chunks.map((c) => c.headingPath.join(' > '))).size).toBeGreaterThan(2);
  });
});

describe('chunkDocument', () => {
  it('records the page each chunk starts on and no heading path without headings', async () => {
    const text = 'First page text.\n\nSecond page text.';
    const chunks = await chunkDocument(
      {
        text,
        headings: [],
        pages: [
          { page: 1, start: 0, end: 16 },
          { page: 2, start: 18, end: text.length },
        ],
      },
      { strategy: 'paragraph', size: 100 },
      wordCounter,
    );
    expect(chunks.map((c) => c.text)).toEqual(['First page text.\n\nSecond page text.']);
    expect(chunks[0]).toMatchObject({ page: 1, headingPath: [], tokenCount: 6 });
    const split = await chunkDocument(
      {
        text,
        headings: [],
        pages: [
          { page: 1, start: 0, end: 16 },
          { page: 2, start: 18, end: text.length },
        ],
      },
      { strategy: 'sentence', size: 20, overlap: 0 },
      wordCounter,
    );
    expect(split.map((c) => c.page)).toEqual([1, 2]);
  });
});
