import type { SearchHit } from '../search/search.model';
import { estimateTokens, mergeAdjacent, packContext } from './context.packing';

const DOC = 'Alpha beta gamma. Delta epsilon zeta. Eta theta iota. Kappa lambda mu.';
/** A hit for DOC[start, end), the way the chunker would have cut it. */
const hit = (
  chunkIndex: number,
  start: number,
  end: number,
  score: number,
  documentId = 'd1',
): SearchHit => ({
  documentId,
  documentVersion: 1,
  chunkIndex,
  title: 'Greek',
  text: DOC.slice(start, end),
  startOffset: start,
  endOffset: end,
  score,
  strategies: ['semantic'],
  isMatch: true,
});

describe('mergeAdjacent', () => {
  it('merges consecutive chunks, writing an overlap once, so the text matches the document', () => {
    // chunk 0 = [0, 36), chunk 1 = [18, 52) overlaps it by 18 characters.
    const [passage] = mergeAdjacent([hit(1, 18, 52, 0.5), hit(0, 0, 36, 0.9)]);
    expect(passage).toMatchObject({
      firstChunkIndex: 0,
      lastChunkIndex: 1,
      startOffset: 0,
      endOffset: 52,
      score: 0.9,
    });
    expect(passage!.text).toBe(DOC.slice(0, 52));
  });

  it('keeps non-adjacent chunks and other documents apart', () => {
    const passages = mergeAdjacent([
      hit(0, 0, 17, 0.9),
      hit(2, 37, 52, 0.8),
      hit(1, 18, 36, 0.7, 'd2'),
    ]);
    expect(passages.map((p) => [p.documentId, p.firstChunkIndex, p.lastChunkIndex])).toEqual([
      ['d1', 0, 0],
      ['d1', 2, 2],
      ['d2', 1, 1],
    ]);
  });
});

describe('packContext', () => {
  // Sentences at [0, 17), [18, 37), [38, 53), [54, 70), separated by single spaces.
  const hits = [hit(0, 0, 17, 0.9), hit(2, 38, 53, 0.8), hit(3, 54, 70, 0.7)];

  it('never exceeds the budget and numbers citations in order', () => {
    for (const budget of [5, 8, 10, 13, 100]) {
      const packed = packContext(hits, budget);
      expect(packed.tokensUsed).toBeLessThanOrEqual(budget);
      expect(packed.passages.reduce((sum, p) => sum + p.tokens, 0)).toBe(packed.tokensUsed);
      expect(packed.passages.map((p) => p.citation)).toEqual(packed.passages.map((_, i) => i + 1));
    }
  });

  it('keeps best passages first, merges neighbours and fills leftover room with smaller ones', () => {
    const packed = packContext(hits, 100);
    expect(packed.passages.map((p) => [p.firstChunkIndex, p.lastChunkIndex])).toEqual([
      [0, 0],
      [2, 3],
    ]);
    expect(packed.passages[1]!.text).toBe(DOC.slice(38, 70)); // the trimmed space restored
    expect(packed.truncated).toBe(false);
  });

  it('drops duplicate texts from other documents', () => {
    const packed = packContext([hit(0, 0, 17, 0.9), hit(0, 0, 17, 0.8, 'copy')], 100);
    expect(packed.passages.map((p) => p.documentId)).toEqual(['d1']);
  });

  it('cuts the best passage at a word boundary when nothing fits whole', () => {
    const packed = packContext([hit(0, 0, 71, 0.9)], 4);
    expect(packed.truncated).toBe(true);
    expect(packed.tokensUsed).toBeLessThanOrEqual(4);
    expect(DOC.startsWith(packed.passages[0]!.text)).toBe(true);
    expect(packed.passages[0]!.endOffset - packed.passages[0]!.startOffset).toBe(
      packed.passages[0]!.text.length,
    );
  });

  it('estimates about four characters per token, rounding up', () => {
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
  });
});
