// The constants from where they are defined: through pg-lexical-index's re-export each read is a
// getter call in CommonJS, and the loops below run once per posting.
import { BM25_B, BM25_K1 } from './bm25-search.sql';
import type { Readers } from './bm25-statistics';
import { kthLargest } from './snapshot-arrays';

export {
  blendedIdf,
  dfOf,
  EVERYONE,
  ownWeight,
  PRIOR_CHUNKS,
  queryWeights,
  type Readers,
} from './bm25-statistics';
export { capFeedback, FEEDBACK_CAP, type FeedbackCap } from './feedback-cap';

/** One lexeme's postings in a snapshot: chunk ordinals (ascending) and counts. */
export interface PostingList {
  size: number;
  ordinals: Int32Array;
  tfs: Int32Array;
  /** The largest count: with the shortest chunk, the bound on the lexeme's share of a score. */
  maxTf: number;
}

/** A query lexeme with postings: its weight in the query and its idf over the readable chunks. */
export interface Term {
  list: PostingList;
  weight: number;
  idf: number;
}

/**
 * A posting list in ascending chunk order, with its largest count. Typed arrays throughout: a
 * cold list at a million chunks has ~350,000 postings, and a tuple per posting cost more than
 * reading it from Postgres.
 */
export function postingList(list: {
  ordinals: ArrayLike<number>;
  tfs: ArrayLike<number>;
}): PostingList {
  const read = Int32Array.from(list.ordinals);
  const counts = Int32Array.from(list.tfs);
  const size = read.length;
  let ascending = true;
  for (let i = 1; i < size && ascending; i++) ascending = read[i - 1]! <= read[i]!;
  const order = ascending ? undefined : Array.from(read.keys()).sort((x, y) => read[x]! - read[y]!);
  const ordinals = order ? Int32Array.from(order, (i) => read[i]!) : read;
  const tfs = order ? Int32Array.from(order, (i) => counts[i]!) : counts;
  let maxTf = 0;
  for (let i = 0; i < size; i++) if (tfs[i]! > maxTf) maxTf = tfs[i]!;
  return { size, ordinals, tfs, maxTf };
}

/**
 * The arrays one search scores into, allocated once per snapshot and zeroed after each search
 * (a search runs to its end synchronously, so two never share them): allocating and zeroing
 * them per search cost as much as scoring at 100,000 chunks.
 */
export class Scratch {
  readonly scores: Float64Array;
  readonly seen: Uint8Array;
  readonly touched: Int32Array;
  /** Chunks kept by pruning (1), for the pass over the remaining terms. */
  readonly kept: Uint8Array;
  count = 0;
  private savedScores?: Float64Array;

  constructor(size: number) {
    this.scores = new Float64Array(size);
    this.seen = new Uint8Array(size);
    this.touched = new Int32Array(size);
    this.kept = new Uint8Array(size);
  }

  /** Scores put aside while pruning (`scoreTerms`), allocated once, on first use. */
  saved(): Float64Array {
    this.savedScores ??= new Float64Array(this.scores.length);
    return this.savedScores;
  }

  clear(): void {
    for (let i = 0; i < this.count; i++) {
      const o = this.touched[i]!;
      this.scores[o] = 0;
      this.seen[o] = 0;
      this.kept[o] = 0;
    }
    this.count = 0;
  }
}

export interface Space {
  lengths: Int32Array;
  minLength: number;
  readers: Readers;
}

/** Pruning keeps a chunk whose bound is this close to the threshold (floating-point slack). */
export const SLACK = 1e-9;

/** The largest share `term` can add to a chunk's score: its largest count in the shortest chunk. */
export function shareBound(term: Term, space: Space): number {
  const shortest = BM25_K1 * (1 - BM25_B + (BM25_B * space.minLength) / space.readers.avgdl);
  const most = term.list.maxTf;
  return (term.weight * term.idf * (most * (BM25_K1 + 1))) / (most + shortest);
}

/**
 * Adds `term`'s share to every readable chunk of its postings in `scratch`, but not to a chunk
 * `scratch.seen` marks `skip` (RM3's second pass: a chunk whose score has the term already,
 * feedback-pass.ts; by default none is). Postgres' order of operations, so each term's share is
 * the same double: (weight · idf) · (tf · (k1 + 1)) / (tf + k1 · (1 − b + b · length / avgdl)).
 */
export function addTerm(term: Term, space: Space, scratch: Scratch, skip = -1): void {
  const k1 = BM25_K1;
  const b = BM25_B;
  const saturation = k1 + 1;
  const { lengths } = space;
  const { mask, avgdl } = space.readers;
  const { scores, seen, touched } = scratch;
  const weighted = term.weight * term.idf;
  const { ordinals, tfs, size } = term.list;
  let count = scratch.count;
  for (let i = 0; i < size; i++) {
    const o = ordinals[i]!;
    if ((mask && !mask[o]) || seen[o] === skip) continue;
    const tf = tfs[i]!;
    scores[o] += (weighted * (tf * saturation)) / (tf + k1 * (1 - b + (b * lengths[o]!) / avgdl));
    if (!seen[o]) {
      seen[o] = 1;
      touched[count++] = o;
    }
  }
  scratch.count = count;
}

/**
 * Adds `term`'s share to `chunks` (ascending, each marked in `marked`: with `mark`, as that) only:
 * each looked up in the list from where the last one was when they are few, else the list
 * scanned for the marked.
 */
export function addToChunks(
  term: Term,
  chunks: number[] | null,
  marked: Uint8Array,
  space: Space,
  scores: Float64Array,
  mark?: number,
): void {
  const k1 = BM25_K1;
  const b = BM25_B;
  const saturation = k1 + 1;
  const { lengths } = space;
  const { mask, avgdl } = space.readers;
  const weighted = term.weight * term.idf;
  const { ordinals, tfs, size } = term.list;
  const share = (tf: number, o: number) =>
    (weighted * (tf * saturation)) / (tf + k1 * (1 - b + (b * lengths[o]!) / avgdl));
  if (chunks && chunks.length * Math.log2(size + 1) < size) {
    let from = 0;
    for (const o of chunks) {
      // Galloping from where the last one was (the chunks are ascending): the probes stay near,
      // in memory a long list may not have in cache.
      let step = 1;
      while (from + step < size && ordinals[from + step]! < o) step *= 2;
      let lo = from + (step >> 1);
      let hi = Math.min(from + step + 1, size);
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (ordinals[mid]! < o) lo = mid + 1;
        else hi = mid;
      }
      from = lo;
      if (lo < size && ordinals[lo] === o && (!mask || mask[o])) scores[o] += share(tfs[lo]!, o);
    }
  } else {
    for (let i = 0; i < size; i++) {
      const o = ordinals[i]!;
      const chosen = mark === undefined ? marked[o] !== 0 : marked[o] === mark;
      if (chosen && (!mask || mask[o])) scores[o] += share(tfs[i]!, o);
    }
  }
}

/**
 * Scores the terms' readable postings into `scratch` and returns the chunks that may be in the
 * top k. Without `prune`, every scored chunk, each term added in the query's order. With it,
 * MaxScore (Turtle and Flood, "Query evaluation: strategies and optimizations", 1995): terms by
 * their largest possible share, rarest first; once the shares still to come cannot lift an
 * unseen chunk to the k-th best score so far, the remaining (common, long) lists are not scanned:
 * they are added, largest bound first, to the chunks that can still reach it, dropping after each
 * the chunks that no longer can (docs/adr/0059). The chunks returned and their scores are those
 * of the exhaustive pass (sums may differ in the last bit: terms are added in another order, as
 * Postgres may).
 * `unscanned`: the terms only added to the chunks returned (`scratch.kept` marks them); any other
 * chunk's score in `scratch` lacks all their shares. Empty when every chunk scored is returned.
 * `keepReached`: none dropped once the scans stop (a first pass RM3's second reuses, which then
 * finds more scores whole: docs/adr/0059).
 */
export function scoreTerms(
  terms: Term[],
  space: Space,
  scratch: Scratch,
  prune?: { topK: number; inScope: Uint8Array | null; keepReached?: boolean },
): { candidates: Int32Array; count: number; unscanned: Term[] } {
  const { scores, touched } = scratch;
  const all = () => ({ candidates: touched, count: scratch.count, unscanned: [] });
  if (!prune || terms.length < 2 || terms.some((term) => !(term.weight > 0))) {
    for (const term of terms) addTerm(term, space, scratch);
    return all();
  }
  const order = terms
    .map((term) => ({ term, bound: shareBound(term, space) }))
    .sort((x, y) => y.bound - x.bound);
  let rest = order.reduce((sum, { bound }) => sum + bound, 0);
  let postings = terms.reduce((sum, term) => sum + term.list.size, 0);
  let done = 0;
  let tried = Infinity;
  for (let t = 0; t < order.length - 1; t++) {
    addTerm(order[t]!.term, space, scratch);
    done += order[t]!.bound;
    rest -= order[t]!.bound;
    postings -= order[t]!.term.list.size;
    // The k-th best so far is at most the largest score so far, which is at most `done`. Finding
    // it costs a pass over the chunks scored so far: tried while that is cheaper than the
    // postings it may spare, and again only once the bound still to come has halved.
    if (rest >= done || scratch.count * 2 > postings || rest > tried / 2) continue;
    const threshold = kthLargest(touched, scratch.count, prune.inScope, scores, prune.topK);
    tried = rest;
    if (!(rest < threshold * (1 - SLACK))) continue;
    const kept = reachable(order.slice(t + 1), threshold, space, scratch, prune);
    const unscanned = order.slice(t + 1).map(({ term }) => term);
    return { candidates: kept, count: kept.length, unscanned };
  }
  addTerm(order[order.length - 1]!.term, space, scratch);
  return all();
}
/**
 * The chunks in scope that can still reach `threshold` with the bounds of the `unscanned` terms,
 * with those terms (largest bound first) added to them: after each, a chunk its score and the
 * bounds still to come cannot lift to `threshold` is dropped (MaxScore's candidate pruning), and
 * its score put back to what the scanned terms gave it (`FirstPass`, feedback-pass.ts, holds such
 * scores). Ascending; `scratch.kept` marks them.
 */
function reachable(
  unscanned: Array<{ term: Term; bound: number }>,
  threshold: number,
  space: Space,
  scratch: Scratch,
  { inScope, keepReached }: { inScope: Uint8Array | null; keepReached?: boolean },
): Int32Array {
  const { scores, touched, kept: marked } = scratch;
  const after = new Float64Array(unscanned.length); // what the terms after each can still add
  for (let j = unscanned.length - 1; j-- > 0;) after[j] = after[j + 1]! + unscanned[j + 1]!.bound;
  // The chunks left go to the front of `touched`, their scanned terms' scores beside in `saved`.
  const saved = scratch.saved();
  let left = 0;
  const first = (threshold - (after[0]! + unscanned[0]!.bound)) * (1 - SLACK);
  for (let i = 0; i < scratch.count; i++) {
    const o = touched[i]!;
    if ((inScope && !inScope[o]) || !(scores[o]! >= first)) continue;
    marked[o] = 1;
    touched[i] = touched[left]!;
    touched[left] = o;
    saved[left++] = scores[o]!;
  }
  // Each list scanned for the marked while many are left, then looked up in it (ascending).
  let listed: number[] | null = null;
  for (let j = 0; j < unscanned.length; j++) {
    const { term } = unscanned[j]!;
    if (!listed && left * Math.log2(term.list.size + 1) < term.list.size) {
      const byChunk = Array.from({ length: left }, (_, i) => i);
      byChunk.sort((x, y) => touched[x]! - touched[y]!);
      listed = byChunk.map((i) => touched[i]!);
      const scanned = byChunk.map((i) => saved[i]!);
      listed.forEach((o, i) => {
        touched[i] = o;
        saved[i] = scanned[i]!;
      });
    }
    addToChunks(term, listed, marked, space, scores);
    if (keepReached) continue;
    const floor = (threshold - after[j]!) * (1 - SLACK);
    let kept = 0;
    for (let i = 0; i < left; i++) {
      const o = touched[i]!;
      if (scores[o]! >= floor) {
        touched[i] = touched[kept]!;
        touched[kept] = o;
        saved[kept++] = saved[i]!;
      } else {
        scores[o] = saved[i]!;
        marked[o] = 0;
      }
    }
    left = kept;
    if (listed) {
      listed.length = left;
      for (let i = 0; i < left; i++) listed[i] = touched[i]!;
    }
  }
  return touched.slice(0, left).sort();
}
