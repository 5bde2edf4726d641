import {
  postingList,
  type Readers,
  scoreTerms,
  Scratch,
  shareBound,
  type Space,
  type Term,
} from './bm25-rank';
import { bestChunks } from './snapshot-arrays';

/** Deterministic noise (a linear congruential generator), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

const SIZE = 4_000;

/** A long query (docs/adr/0059): 15–40 lexemes, Zipf-like, a few rare and many common. */
function longQuery(next: () => number): Term[] {
  return Array.from({ length: 15 + Math.floor(next() * 26) }, () => {
    const density = Math.min(0.6, 0.0005 * Math.exp(next() * 7.5));
    const most = 1 + Math.floor(next() * 6);
    const ordinals: number[] = [];
    const tfs: number[] = [];
    for (let o = 0; o < SIZE; o++) {
      if (next() < density) {
        ordinals.push(o);
        tfs.push(1 + Math.floor(next() ** 3 * most));
      }
    }
    return { list: postingList({ ordinals, tfs }), weight: 1, idf: Math.log(1 / density) };
  });
}

/** Chunk → score for the chunks `scored` left, in scope. */
function scoresOf(
  scratch: Scratch,
  scored: { candidates: Int32Array; count: number },
  inScope: Uint8Array | null,
) {
  const held = new Map<number, number>();
  for (const o of scored.candidates.subarray(0, scored.count)) {
    if (!inScope || inScope[o]) held.set(o, scratch.scores[o]!);
  }
  return held;
}

describe('scoreTerms on long queries: a primed threshold and pruning after each unscanned list', () => {
  it('keeps the exhaustive top k and leaves every chunk it dropped with exactly the scanned terms’ score, over 200 random queries', () => {
    let pruned = 0;
    let dropped = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const next = random(seed);
      const lengths = Int32Array.from({ length: SIZE }, () => 5 + Math.floor(next() * 80));
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
      const terms = longQuery(next);
      const k = 1 + Math.floor(next() ** 2 * 60);

      const exhaustive = new Scratch(SIZE);
      const all = scoresOf(exhaustive, scoreTerms(terms, space, exhaustive), inScope);
      const best = [...all].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, k);
      const scratch = new Scratch(SIZE);
      const scored = scoreTerms(terms, space, scratch, { topK: k, inScope });
      const kept = scoresOf(scratch, scored, inScope);
      const got = [...kept].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, k);
      expect({ seed, chunks: got.map(([o]) => o) }).toEqual({ seed, chunks: best.map(([o]) => o) });
      for (const [o, score] of kept) expect(score).toBeCloseTo(all.get(o)!, 9);

      if (scored.unscanned.length === 0) continue;
      pruned++;
      // The memo's assumption (feedback-pass.ts, FirstPass): a chunk touched and not kept has
      // the scanned terms' shares only, the same double as scanning them alone in the same order.
      const scanned = terms
        .filter((term) => !scored.unscanned.includes(term))
        .sort((x, y) => shareBound(y, space) - shareBound(x, space));
      const partial = new Scratch(SIZE);
      scoreTerms(scanned, space, partial);
      expect(scratch.count).toBe(partial.count);
      const wrong: Array<{ o: number; score: number; scanned: number }> = [];
      for (let i = 0; i < scratch.count; i++) {
        const o = scratch.touched[i]!;
        if (scratch.kept[o] !== (kept.has(o) ? 1 : 0)) wrong.push({ o, score: NaN, scanned: NaN });
        if (scratch.kept[o]) continue;
        dropped++;
        if (scratch.scores[o] !== partial.scores[o]) {
          wrong.push({ o, score: scratch.scores[o]!, scanned: partial.scores[o]! });
        }
      }
      expect({ seed, wrong }).toEqual({ seed, wrong: [] });
    }
    // The pruned path ran, and dropped chunks after scoring some of them.
    expect(pruned).toBeGreaterThan(100);
    expect(dropped).toBeGreaterThan(10_000);
  });
});

describe('bestChunks', () => {
  it('returns the m best in scope (any of those tied at the m-th), over 200 random arrays', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = random(seed);
      const size = 1 + Math.floor(next() * 300);
      const scores = Float64Array.from({ length: size }, () => Math.floor(next() * 20));
      const candidates = Int32Array.from({ length: size }, (_, o) => o).sort(() => next() - 0.5);
      const inScope =
        next() < 0.5 ? Uint8Array.from({ length: size }, () => +(next() < 0.6)) : null;
      const count = Math.floor(next() * (size + 1));
      const m = 1 + Math.floor(next() * 40);
      const eligible = Array.from(candidates.subarray(0, count)).filter(
        (o) => !inScope || inScope[o],
      );
      const expected = eligible
        .map((o) => scores[o]!)
        .sort((x, y) => y - x)
        .slice(0, m);
      const got = bestChunks(candidates, count, inScope, scores, m);
      expect(new Set(got).size).toBe(got.length);
      for (const o of got) expect(eligible).toContain(o);
      expect(got.map((o) => scores[o]!).sort((x, y) => y - x)).toEqual(expected);
    }
  });
});
