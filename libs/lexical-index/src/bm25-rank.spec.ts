import { postingList, type Readers, scoreTerms, Scratch, type Term } from './bm25-rank';

/** Deterministic noise (a linear congruential generator), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

const SIZE = 3_000;

/** The top k (chunk, score) of what `scoreTerms` left as candidates, ties by chunk. */
function topOf(scratch: Scratch, scored: { candidates: Int32Array; count: number }, k: number) {
  const chosen = Array.from(scored.candidates.subarray(0, scored.count), (o) => ({
    o,
    score: scratch.scores[o]!,
  }));
  return chosen.sort((x, y) => y.score - x.score || x.o - y.o).slice(0, k);
}

describe('scoreTerms with MaxScore pruning', () => {
  it('keeps the exhaustive top k while scoring fewer chunks, over 300 random queries', () => {
    let pruned = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const lengths = Int32Array.from({ length: SIZE }, () => 5 + Math.floor(next() * 60));
      const readers: Readers = { mask: null, n: SIZE, avgdl: 35, dfs: new Map() };
      // Rare and common lexemes, light and heavy, in any mix.
      const terms: Term[] = Array.from({ length: 2 + Math.floor(next() * 10) }, () => {
        const density = 0.002 + next() ** 2 * 0.8;
        const most = 1 + Math.floor(next() * 8);
        const ordinals: number[] = [];
        const tfs: number[] = [];
        for (let o = 0; o < SIZE; o++) {
          if (next() < density) {
            ordinals.push(o);
            tfs.push(1 + Math.floor(next() * most));
          }
        }
        return {
          list: postingList({ ordinals, tfs }),
          weight: 0.05 + next() * 2,
          idf: 0.1 + next() * 4,
        };
      });
      const space = { lengths, minLength: Math.min(...lengths), readers };
      const k = 1 + Math.floor(next() * 5);
      const exhaustive = new Scratch(SIZE);
      const expected = topOf(exhaustive, scoreTerms(terms, space, exhaustive), k);
      const scratch = new Scratch(SIZE);
      const scored = scoreTerms(terms, space, scratch, { topK: k, inScope: null });
      const got = topOf(scratch, scored, k);
      expect({ seed, chunks: got.map((hit) => hit.o) }).toEqual({
        seed,
        chunks: expected.map((hit) => hit.o),
      });
      got.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i]!.score, 9));
      if (scored.count < exhaustive.count) pruned++;
      scratch.clear();
      expect(scratch.scores.every((score) => score === 0)).toBe(true);
    }
    // The pruned path ran, not only the exhaustive one.
    expect(pruned).toBeGreaterThan(100);
  });

  it('does not prune while the terms to come could still lift an unseen chunk past the k-th best', () => {
    // Every chunk as long as the average: a share is weight · idf · tf · (k1 + 1) / (tf + k1).
    const lengths = new Int32Array(200).fill(10);
    const readers: Readers = { mask: null, n: 200, avgdl: 10, dfs: new Map() };
    const only = (chunks: number[], weight: number): Term => ({
      list: postingList({ ordinals: chunks, tfs: chunks.map(() => 1) }),
      weight,
      idf: 1,
    });
    const common = (extra: number) => [1, ...Array.from({ length: 60 }, (_, i) => 2 + i + extra)];
    // Two rare terms (share 1 each, in chunks 0 and 195), then three common ones (0.45 each) that
    // only chunk 1 holds all of: 1.35 beats 1, though no rare term names chunk 1.
    const terms = [only([0], 1), only([195], 1), only(common(0), 0.45), only(common(60), 0.45)];
    terms.push(
      only(
        common(120).filter((o) => o < 200),
        0.45,
      ),
    );
    const scratch = new Scratch(200);
    const scored = scoreTerms(terms, { lengths, minLength: 10, readers }, scratch, {
      topK: 1,
      inScope: null,
    });
    expect(topOf(scratch, scored, 1)).toEqual([{ o: 1, score: expect.closeTo(1.35, 9) }]);
  });
});
