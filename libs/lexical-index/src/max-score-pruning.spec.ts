import {
  postingList,
  type Readers,
  scoreTerms,
  Scratch,
  shareBound,
  type Space,
  type Term,
} from './bm25-rank';

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

describe('scoreTerms on long queries: candidates pruned after each unscanned list', () => {
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
      // Keeping every chunk reached (a first pass with RM3's memo): the same top k, more kept.
      const whole = new Scratch(SIZE);
      const reached = scoreTerms(terms, space, whole, { topK: k, inScope, keepReached: true });
      const wholeScores = scoresOf(whole, reached, inScope);
      const wholeTop = [...wholeScores].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, k);
      expect(wholeTop.map(([o]) => o)).toEqual(best.map(([o]) => o));
      expect(reached.count).toBeGreaterThanOrEqual(scored.count);
      const off = [...wholeScores].filter(([o, score]) => !(Math.abs(score - all.get(o)!) < 1e-9));
      expect({ seed, off }).toEqual({ seed, off: [] });

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
