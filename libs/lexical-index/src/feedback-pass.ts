import {
  addTerm,
  addToChunks,
  type Scratch,
  shareBound,
  SLACK,
  type Space,
  type Term,
} from './bm25-rank';
import { kthLargest } from './snapshot-arrays';

/**
 * What a first pass scored, kept for RM3's second (docs/adr/0058): the chunks in scope that could
 * reach its top k, each with its exact BM25 over the query's own terms (each of weight
 * 1); the other chunks in scope it touched before pruning, with their scores so far, which lack
 * the shares of the own terms it did not scan (`unscanned`); any chunk it did not touch has only
 * shares of those.
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
  unscanned: string[];
}

/** A first pass's chunks in scope and their scores in `scratch`, for `FirstPass`. */
export function firstPassOf(
  base: Pick<FirstPass, 'owner' | 'key' | 'avgdl' | 'terms' | 'unscanned'>,
  scored: { candidates: Int32Array; count: number },
  scratch: Scratch,
  inScope: Uint8Array | null,
): FirstPass {
  // Typed arrays filled in place: a first pass may have touched most of a million chunks.
  const chunks = new Int32Array(scored.count);
  let exact = 0;
  for (let i = 0; i < scored.count; i++) {
    const o = scored.candidates[i]!;
    if (!inScope || inScope[o]) chunks[exact++] = o;
  }
  // Pruned: the chunks touched but not kept (`scratch.kept` marks those kept).
  const partial = new Int32Array(base.unscanned.length > 0 ? scratch.count : 0);
  let left = 0;
  for (let i = 0; i < partial.length; i++) {
    const o = scratch.touched[i]!;
    if (!scratch.kept[o] && (!inScope || inScope[o])) partial[left++] = o;
  }
  const scoresOf = (of: Int32Array) => {
    const scores = new Float64Array(of.length);
    for (let i = 0; i < of.length; i++) scores[i] = scratch.scores[of[i]!]!;
    return scores;
  };
  const held = chunks.subarray(0, exact);
  const rest = partial.subarray(0, left);
  return {
    ...base,
    chunks: held,
    scores: scoresOf(held),
    partial: rest,
    partialScores: scoresOf(rest),
  };
}

/**
 * The scans stop once the terms left could add at most this share of the k-th best score so far
 * to a chunk, not as soon as they could not lift one to it: a few more scans of the shorter lists
 * raise the floor below which chunks are dropped, and the longest lists are then looked up for
 * far fewer chunks (a million chunks, a third readable, uncapped: 26 ms with 0.5, 93 with 1,
 * 63–74 ranking in full; docs/adr/0058).
 */
const SPARE = 0.5 * (1 - SLACK);

/** In `scratch.seen`: a chunk whose own terms' score is complete (the first pass kept it). */
const COMPLETE = 2;

/**
 * RM3's second pass on its first pass's scores (docs/adr/0058). The expanded query's score is
 * `ownWeight` times the own terms' BM25 plus the shares of `extra` (the feedback terms, and the
 * feedback's weight on the query's own terms), with the same statistics. Each chunk the first
 * pass touched starts from `ownWeight` times its score there; `extra` and the own terms the first
 * pass did not scan (`unscanned`, at `ownWeight`; they add nothing to a chunk it kept, whose
 * score has them) are added with MaxScore, as `scoreTerms` adds a query's. Undefined when the
 * first pass cannot serve (a filter over a pruned first pass; a weight not positive).
 */
export function scoreOnFirstPass(
  first: FirstPass,
  unscanned: Term[],
  ownWeight: number,
  extra: Term[],
  space: Space,
  scratch: Scratch,
  prune: { topK: number; inScope: Uint8Array | null } | undefined,
): { candidates: Int32Array; count: number } | undefined {
  if (!(ownWeight > 0) || extra.some((term) => !(term.weight * term.idf > 0))) return undefined;
  if (!prune && unscanned.length > 0) return undefined;
  const { scores, seen, touched } = scratch;
  const exact = first.chunks.length;
  const known = exact + first.partial.length;
  for (let i = 0; i < exact; i++) {
    const o = first.chunks[i]!;
    scores[o] = ownWeight * first.scores[i]!;
    seen[o] = COMPLETE;
    touched[i] = o;
  }
  for (let i = exact; i < known; i++) {
    const o = first.partial[i - exact]!;
    scores[o] = ownWeight * first.partialScores[i - exact]!;
    seen[o] = 1;
    touched[i] = o;
  }
  scratch.count = known;
  if (!prune) {
    // Every chunk with a share of the own terms is held, with its whole score.
    for (const term of extra) addTerm(term, space, scratch);
    return { candidates: touched, count: scratch.count };
  }
  const { topK, inScope } = prune;
  const owned = new Set(unscanned);
  const order = [...extra, ...unscanned]
    .map((term) => ({ term, bound: shareBound(term, space) }))
    .sort((x, y) => y.bound - x.bound);
  let rest = order.reduce((sum, { bound }) => sum + bound, 0);
  let postings = order.reduce((sum, { term }) => sum + term.list.size, 0);
  // Every score so far is at most the chunk's final one: the k-th best so far is a lower bound.
  let threshold = kthLargest(touched, scratch.count, inScope, scores, topK);
  let t = 0;
  let tried = Infinity;
  for (; t < order.length; t++) {
    if (rest < threshold * SPARE) break;
    const { term, bound } = order[t]!;
    // An own term the first pass did not scan: not to a chunk whose score has it already.
    addTerm(term, space, scratch, owned.has(term) ? COMPLETE : undefined);
    rest -= bound;
    postings -= term.list.size;
    // As in `scoreTerms`: the k-th best found again only while that is cheaper than the postings
    // it may spare, and once the bound still to come has halved.
    if (scratch.count * 2 > postings || rest > tried / 2) continue;
    threshold = kthLargest(touched, scratch.count, inScope, scores, topK);
    tried = rest;
  }
  if (t === order.length) return { candidates: touched, count: scratch.count };
  const remaining = order.slice(t);
  threshold = kthLargest(touched, scratch.count, inScope, scores, topK);
  const floor = (threshold - rest) * (1 - SLACK);
  const kept: number[] = [];
  const incomplete: number[] = [];
  for (let i = 0; i < scratch.count; i++) {
    const o = touched[i]!;
    if ((inScope && !inScope[o]) || !(scores[o]! >= floor)) continue;
    kept.push(o);
    scratch.kept[o] = seen[o] === COMPLETE ? 1 : 2;
    if (seen[o] !== COMPLETE) incomplete.push(o);
  }
  kept.sort((x, y) => x - y);
  incomplete.sort((x, y) => x - y);
  for (const { term } of remaining) {
    if (owned.has(term)) addToChunks(term, incomplete, scratch.kept, space, scores, 2);
    else addToChunks(term, kept, scratch.kept, space, scores);
  }
  return { candidates: Int32Array.from(kept), count: kept.length };
}

/**
 * The second pass from the first's scores, if the query's own terms are those
 * the first pass scored, with the same statistics; undefined otherwise.
 */
export function secondPassOn(
  first: FirstPass,
  own: Term[],
  ownLexemes: string[],
  feedback: Term[],
  expansion: { ownWeight: number; weights: ReadonlyMap<string, number> },
  space: Space,
  scratch: Scratch,
  prune: { topK: number; inScope: Uint8Array | null } | undefined,
): { candidates: Int32Array; count: number } | undefined {
  if (first.terms.size !== own.length) return undefined;
  const extra = [...feedback];
  const unscanned: Term[] = [];
  for (const [i, term] of own.entries()) {
    const lexeme = ownLexemes[i]!;
    const held = first.terms.get(lexeme);
    if (held?.idf !== term.idf || held.size !== term.list.size) return undefined;
    const weight = expansion.weights.get(lexeme);
    if (weight !== undefined) extra.push({ list: term.list, weight, idf: term.idf });
    if (first.unscanned.includes(lexeme)) {
      unscanned.push({ list: term.list, weight: expansion.ownWeight, idf: term.idf });
    }
  }
  return scoreOnFirstPass(first, unscanned, expansion.ownWeight, extra, space, scratch, prune);
}
