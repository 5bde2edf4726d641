import {
  capFeedback,
  FEEDBACK_CAP,
  postingList,
  queryWeights,
  type Readers,
  scoreTerms,
  Scratch,
  type Term,
} from './bm25-rank';

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

describe('queryWeights', () => {
  it('weighs each lexeme 1 without feedback', () => {
    expect(queryWeights(['librari', 'dewey'], undefined)).toEqual({
      weights: new Map([
        ['librari', 1],
        ['dewey', 1],
      ]),
      feedback: new Set(),
    });
  });

  it("shares λ among the query's lexemes, adds feedback weights, and names the lexemes only feedback gave", () => {
    const { weights, feedback } = queryWeights(['librari', 'dewey'], {
      queryWeight: 0.7,
      terms: [
        { lexeme: 'dewey', weight: 0.1 },
        { lexeme: 'catalog', weight: 0.2 },
      ],
    });
    expect(weights.get('librari')).toBeCloseTo(0.35, 12);
    expect(weights.get('dewey')).toBeCloseTo(0.45, 12);
    expect(weights.get('catalog')).toBe(0.2);
    expect(feedback).toEqual(new Set(['catalog']));
  });
});

describe('capFeedback: what RM3 may add to a search', () => {
  const term = (size: number, weight: number, idf: number): Term => ({
    list: postingList({
      ordinals: Array.from({ length: size }, (_, o) => o),
      tfs: Array.from({ length: size }, () => 1),
    }),
    weight,
    idf,
  });
  const own = [term(300, 0.35, 4), term(700, 0.35, 2)];
  const cap = { minIdf: 1, postingsShare: 1, minPostings: 100 };

  it('drops feedback terms whose idf is below the floor (the common ones)', () => {
    const rare = term(50, 0.1, 3);
    const common = term(900, 0.1, 0.4);
    expect(capFeedback(own, [common, rare], cap)).toEqual([rare]);
  });

  it("keeps the largest shares first while their postings fit within the query's own, in the given order", () => {
    const a = term(600, 0.05, 2); // share 0.1
    const b = term(500, 0.1, 3); // share 0.3: first
    const c = term(400, 0.1, 1.5); // share 0.15: second, 900 postings so far
    const d = term(90, 0.01, 2); // share 0.02: still fits (990)
    expect(capFeedback(own, [a, b, c, d], cap)).toEqual([b, c, d]);
  });

  it('keeps every feedback term, common ones too, while all their postings fit within minPostings', () => {
    const rare = term(20, 0.1, 3);
    const common = term(70, 0.1, 0.4);
    expect(capFeedback(own, [common, rare], cap)).toEqual([common, rare]);
    expect(capFeedback(own, [common, rare, term(20, 0.1, 2)], cap)).not.toContain(common);
  });

  it('allows at least minPostings when the query’s own terms are rare', () => {
    const rareOwn = [term(3, 1, 8)];
    const feedback = [term(60, 0.1, 2), term(60, 0.1, 3)];
    expect(capFeedback(rareOwn, feedback, cap)).toEqual([feedback[1]]);
    expect(capFeedback(rareOwn, feedback, { ...cap, minPostings: 120 })).toEqual(feedback);
  });

  it('by default, lets feedback cost at most as many postings as the query, or 2,000', () => {
    expect(FEEDBACK_CAP).toEqual({ minIdf: 0.5, postingsShare: 1, minPostings: 2_000 });
  });
});
