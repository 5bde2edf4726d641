import { postingList, type Readers, scoreTerms, Scratch, type Space, type Term } from './bm25-rank';
import { blocksOf, scoreWindows, WINDOW_BITS } from './window-max-score';

/** Deterministic noise (a linear congruential generator), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

/** Ten windows and a bit, so most queries skip some. */
const SIZE = (10 << WINDOW_BITS) + 77;

/**
 * A long query over `SIZE` chunks (docs/adr/0059): 1–40 lexemes, a few rare and many common. With
 * `runs`, the chunks come in runs of identical copies (a document's copies, as `bench query
 * --scale` writes them: adjacent ordinals, the same counts and lengths).
 */
function query(next: () => number, source: (o: number) => number): Term[] {
  return Array.from({ length: 1 + Math.floor(next() * 40) }, () => {
    const density = Math.min(0.6, 0.0005 * Math.exp(next() * 7.5));
    const most = 1 + Math.floor(next() * 6);
    const drawn = new Map<number, number>();
    const ordinals: number[] = [];
    const tfs: number[] = [];
    for (let o = 0; o < SIZE; o++) {
      const from = source(o);
      if (!drawn.has(from))
        drawn.set(from, next() < density ? 1 + Math.floor(next() ** 3 * most) : 0);
      const tf = drawn.get(from)!;
      if (tf === 0) continue;
      ordinals.push(o);
      tfs.push(tf);
    }
    return {
      list: postingList({ ordinals, tfs }),
      weight: 0.2 + next(),
      idf: Math.log(1 / density),
    };
  });
}

/** The top k of the chunks `scored` left in scope, by score then ordinal, with their scores. */
function topOf(
  scratch: Scratch,
  scored: { candidates: Int32Array; count: number },
  inScope: Uint8Array | null,
  k: number,
): Array<[number, number]> {
  const held: Array<[number, number]> = [];
  for (const o of scored.candidates.subarray(0, scored.count)) {
    if (!inScope || inScope[o]) held.push([o, scratch.scores[o]!]);
  }
  return held.sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, k);
}

describe('scoreWindows: block-max MaxScore by windows of ordinals', () => {
  it('ranks as the exhaustive pass over 300 random queries, runs of copies and scattered chunks, readers and knowledge bases', () => {
    let skippedSome = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const run = next() < 0.5 ? 1 + Math.floor(next() * 700) : 1;
      const source = (o: number) => Math.floor(o / run);
      const lengthOf = new Map<number, number>();
      const lengths = Int32Array.from({ length: SIZE }, (_, o) => {
        if (!lengthOf.has(source(o))) lengthOf.set(source(o), 5 + Math.floor(next() * 80));
        return lengthOf.get(source(o))!;
      });
      const mask = next() < 0.5 ? Uint8Array.from({ length: SIZE }, () => +(next() < 0.4)) : null;
      let n = SIZE;
      let total = 0;
      for (let o = 0; o < SIZE; o++) {
        if (mask && !mask[o]) n--;
        else total += lengths[o]!;
      }
      const readers: Readers = { mask, n, avgdl: total / n, dfs: new Map() };
      const space: Space = { lengths, minLength: Math.min(...lengths), readers };
      const inScope =
        next() < 0.3 ? Uint8Array.from({ length: SIZE }, () => +(next() < 0.7)) : null;
      const terms = query(next, source);
      const k = 1 + Math.floor(next() ** 2 * 80);

      const exhaustive = new Scratch(SIZE);
      const all = scoreTerms(terms, space, exhaustive);
      const best = topOf(exhaustive, all, inScope, k);
      const scratch = new Scratch(SIZE);
      const scored = scoreWindows(terms, space, scratch, { topK: k, inScope });
      const got = topOf(scratch, scored, inScope, k);
      expect({ seed, chunks: got.map(([o]) => o) }).toEqual({ seed, chunks: best.map(([o]) => o) });
      got.forEach(([, score], i) => expect(score).toBeCloseTo(best[i]![1], 9));
      // What it returns is what `SpaceSnapshot.best` cuts from: no chunk out of scope or unread,
      // none below the k-th best, and `scratch` marks them (its `clear` resets them all).
      const returned = [...scored.candidates.subarray(0, scored.count)];
      expect(returned.every((o) => (!inScope || inScope[o]) && (!mask || mask[o]))).toBe(true);
      if (best.length === k) {
        expect(returned.every((o) => scratch.scores[o]! >= best[k - 1]![1] * (1 - 1e-9))).toBe(
          true,
        );
      }
      expect(scratch.count).toBe(scored.count);
      scratch.clear();
      expect(scratch.scores.every((score) => score === 0)).toBe(true);
      if (scored.count < all.count) skippedSome++;
      if (best.length < k) continue;
      // From a score the k-th best is known to reach (RM3's second pass, docs/adr/0063), the
      // exhaustive pass's own k-th (summed in another order): the same top k; above the best
      // score, nothing at all.
      const atLeast = best[k - 1]![1];
      const seeded = scoreWindows(terms, space, scratch, { topK: k, inScope, atLeast });
      const from = topOf(scratch, seeded, inScope, k).map(([o]) => o);
      expect({ seed, from }).toEqual({ seed, from: best.map(([o]) => o) });
      scratch.clear();
      const above = { topK: k, inScope, atLeast: best[0]![1] * 1.001 };
      expect(scoreWindows(terms, space, scratch, above).count).toBe(0);
    }
    expect(skippedSome).toBeGreaterThan(150);
  });

  it('gives equal chunks the same score in every window, so ties fall by ordinal as in the exhaustive pass', () => {
    // One chunk's postings copied at ordinals 3 and 3 + 5 windows, each with another term beside.
    const far = (5 << WINDOW_BITS) + 3;
    const lengths = new Int32Array(SIZE).fill(40);
    const readers: Readers = { mask: null, n: SIZE, avgdl: 40, dfs: new Map() };
    const space: Space = { lengths, minLength: 40, readers };
    const terms: Term[] = [0.1, 0.37, 1.3, 2.9, 0.05].map((idf, t) => ({
      list: postingList({ ordinals: [3, 100 + t, far], tfs: [t + 1, 1, t + 1] }),
      weight: 1,
      idf,
    }));
    const scratch = new Scratch(SIZE);
    const scored = scoreWindows(terms, space, scratch, { topK: 1, inScope: null });
    const returned = [...scored.candidates.subarray(0, scored.count)];
    expect(returned).toEqual([3, far]);
    expect(scratch.scores[3]).toBe(scratch.scores[far]);
  });

  it('cuts a list at the window boundaries, each block bounded by its largest count and shortest chunk', () => {
    const lengths = new Int32Array(SIZE).fill(50);
    lengths[2] = 7;
    lengths[(3 << WINDOW_BITS) + 1] = 9;
    const list = postingList({
      ordinals: [2, 5, 3 << WINDOW_BITS, (3 << WINDOW_BITS) + 1, 9 << WINDOW_BITS],
      tfs: [1, 4, 2, 1, 6],
    });
    const blocks = blocksOf(list, lengths);
    expect([...blocks.windows]).toEqual([0, 3, 9]);
    expect([...blocks.starts]).toEqual([0, 2, 4, 5]);
    expect([...blocks.maxTfs]).toEqual([4, 2, 6]);
    expect([...blocks.minLengths]).toEqual([7, 9, 50]);
    expect(blocksOf(list, lengths)).toBe(blocks);
  });
});
