import {
  addTerm,
  addToChunks,
  type Scratch,
  shareBound,
  SLACK,
  type Space,
  type Term,
} from './bm25-rank';
import { BM25_B, BM25_K1 } from './bm25-search.sql';
import { kthLargest } from './snapshot-arrays';

/**
 * What a first pass scored, kept for RM3's second (docs/adr/0058): the chunks in scope that could
 * reach its top k, ascending, each with its exact BM25 over the query's own terms (each of weight
 * 1); the other chunks in scope it touched before pruning, with their scores so far; and `rest`,
 * what the own terms it did not scan may add to those and to any chunk it did not touch (0: none).
 */
export interface FirstPass {
  /** Whose scores these are: the snapshot, and the readers and knowledge bases of the search. */
  owner: object;
  key: string;
  avgdl: number;
  /** The query's own terms as they were scored: lexeme → idf and postings. */
  terms: Map<string, { idf: number; size: number }>;
  chunks: Int32Array;
  scores: Float64Array;
  partial: Int32Array;
  partialScores: Float64Array;
  rest: number;
}

/** A first pass's chunks in scope and their scores in `scratch`, for `FirstPass`. */
export function firstPassOf(
  base: Omit<FirstPass, 'chunks' | 'scores' | 'partial' | 'partialScores' | 'rest'>,
  scored: { candidates: Int32Array; count: number; rest: number },
  scratch: Scratch,
  inScope: Uint8Array | null,
): FirstPass {
  const exact: number[] = [];
  for (let i = 0; i < scored.count; i++) {
    const o = scored.candidates[i]!;
    if (!inScope || inScope[o]) exact.push(o);
  }
  exact.sort((x, y) => x - y);
  const partial: number[] = [];
  // Pruned: the chunks touched but not kept (`scratch.kept` marks those kept).
  if (scored.rest > 0) {
    for (let i = 0; i < scratch.count; i++) {
      const o = scratch.touched[i]!;
      if (!scratch.kept[o] && (!inScope || inScope[o])) partial.push(o);
    }
  }
  const scoresOf = (chunks: Int32Array) => Float64Array.from(chunks, (o) => scratch.scores[o]!);
  const chunks = Int32Array.from(exact);
  const left = Int32Array.from(partial);
  return {
    ...base,
    chunks,
    scores: scoresOf(chunks),
    partial: left,
    partialScores: scoresOf(left),
    rest: scored.rest,
  };
}

/**
 * RM3's second pass on its first pass's scores (docs/adr/0058). The expanded query's score is
 * `ownWeight` times the own terms' BM25 plus the shares of `extra` (the feedback terms, and the
 * feedback's weight on the query's own terms), with the same statistics: each chunk the first
 * pass kept starts from its score, and `extra` is added with MaxScore. Its terms by their largest
 * share; while they could lift a chunk whose own score is not known (below its score so far plus
 * `first.rest`) to the k-th best so far they are scanned, then only added to the chunks that can
 * still reach it; such a chunk that can has its own terms' shares looked up (`own`, each of
 * weight 1). Undefined when the first pass cannot serve (a filter over a pruned first pass; a
 * weight not positive); `scratch` is then untouched.
 */
export function scoreOnFirstPass(
  first: FirstPass,
  own: Term[],
  ownWeight: number,
  extra: Term[],
  space: Space,
  scratch: Scratch,
  prune: { topK: number; inScope: Uint8Array | null } | undefined,
): { candidates: Int32Array; count: number } | undefined {
  if (!(ownWeight > 0) || extra.some((term) => !(term.weight * term.idf > 0))) return undefined;
  if (!prune && first.rest > 0) return undefined;
  const { scores, seen, touched } = scratch;
  // touched: [0, exact) own score known; [exact, known) the first pass's partial; then new.
  const exact = first.chunks.length;
  const known = exact + first.partial.length;
  for (let i = 0; i < exact; i++) {
    const o = first.chunks[i]!;
    scores[o] = ownWeight * first.scores[i]!;
    seen[o] = 1;
    touched[i] = o;
  }
  for (let i = exact; i < known; i++) {
    const o = first.partial[i - exact]!;
    seen[o] = 1;
    touched[i] = o;
  }
  scratch.count = known;
  if (!prune) {
    // Every chunk with a share of the own terms is held: any other's own score is 0.
    for (const term of extra) addTerm(term, space, scratch);
    return { candidates: touched, count: scratch.count };
  }
  const { topK, inScope } = prune;
  const left = ownWeight * first.rest;
  // What a chunk whose own score is not known may have of it, at most.
  const unknown = (i: number): number =>
    i < known ? ownWeight * first.partialScores[i - exact]! + left : left;
  let most = left;
  for (let i = exact; i < known; i++) most = Math.max(most, unknown(i));
  const order = extra
    .map((term) => ({ term, bound: shareBound(term, space) }))
    .sort((x, y) => y.bound - x.bound);
  let rest = order.reduce((sum, { bound }) => sum + bound, 0);
  let postings = extra.reduce((sum, term) => sum + term.list.size, 0);
  // Every score so far is at most the chunk's final one: the k-th best so far is a lower bound.
  let threshold = kthLargest(touched, scratch.count, inScope, scores, topK);
  let t = 0;
  for (; t < order.length; t++) {
    if (left + rest < threshold * (1 - SLACK)) break;
    addTerm(order[t]!.term, space, scratch);
    rest -= order[t]!.bound;
    postings -= order[t]!.term.list.size;
    if (scratch.count < postings) {
      threshold = kthLargest(touched, scratch.count, inScope, scores, topK);
    }
  }
  threshold = kthLargest(touched, scratch.count, inScope, scores, topK);
  // A chunk neither held nor scored so far may still place: only a full ranking finds it.
  if (left > 0 && !(left + rest < threshold * (1 - SLACK))) {
    scratch.clear();
    return undefined;
  }
  const floor = (threshold - rest) * (1 - SLACK);
  const kept: number[] = [];
  const looked: number[] = [];
  for (let i = 0; i < scratch.count; i++) {
    const o = touched[i]!;
    if (inScope && !inScope[o]) continue;
    if (i < exact ? scores[o]! >= floor : scores[o]! + unknown(i) >= floor) {
      kept.push(o);
      if (i >= exact) looked.push(o);
    }
  }
  kept.sort((x, y) => x - y);
  for (const o of kept) scratch.kept[o] = 1;
  for (const { term } of order.slice(t)) addToChunks(term, kept, scratch.kept, space, scores);
  if (looked.length > 0 && most > 0) {
    looked.sort((x, y) => x - y);
    const owned = ownScores(own, looked, space);
    looked.forEach((o, i) => (scores[o] += ownWeight * owned[i]!));
  }
  return { candidates: Int32Array.from(kept), count: kept.length };
}

/** The own terms' BM25 (each of weight 1) of `chunks` (ascending), looked up in their lists. */
function ownScores(own: Term[], chunks: number[], space: Space): Float64Array {
  const k1 = BM25_K1;
  const b = BM25_B;
  const { lengths } = space;
  const { mask, avgdl } = space.readers;
  const sums = new Float64Array(chunks.length);
  for (const term of own) {
    const { ordinals, tfs, size } = term.list;
    let from = 0;
    chunks.forEach((o, c) => {
      let lo = from;
      let hi = size;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (ordinals[mid]! < o) lo = mid + 1;
        else hi = mid;
      }
      from = lo;
      if (lo >= size || ordinals[lo] !== o || (mask && !mask[o])) return;
      const tf = tfs[lo]!;
      sums[c] += (term.idf * (tf * (k1 + 1))) / (tf + k1 * (1 - b + (b * lengths[o]!) / avgdl));
    });
  }
  return sums;
}
