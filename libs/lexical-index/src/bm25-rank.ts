// The constants from where they are defined: through pg-lexical-index's re-export each read is a
// getter call in CommonJS, and the loops below run once per posting.
import { BM25_B, BM25_K1 } from './bm25-search.sql';
import type { QueryExpansion } from './lexical-index';
import { kthLargest } from './snapshot-arrays';

/** One lexeme's postings in a snapshot: chunk ordinals (ascending) and counts. */
export interface PostingList {
  size: number;
  ordinals: Int32Array;
  tfs: Int32Array;
  /** The largest count: with the shortest chunk, the bound on the lexeme's share of a score. */
  maxTf: number;
}

/** Which chunks a principal set may read, and the statistics BM25 takes over them. */
export interface Readers {
  /** Null: every chunk (no ACL filter). */
  mask: Uint8Array | null;
  n: number;
  avgdl: number;
  /** Each lexeme's df over these chunks, counted once per snapshot (at most DF_CACHED). */
  dfs: Map<string, number>;
}

/** A query lexeme with postings: its weight in the query and its idf over the readable chunks. */
export interface Term {
  list: PostingList;
  weight: number;
  idf: number;
}

/**
 * What pseudo-relevance feedback may add to a search's cost (docs/adr/0056): feedback terms with
 * an idf below `minIdf` (0.5: in about 60 % of the chunks or more, with readable statistics) are dropped,
 * and the rest, by their largest possible share, only while their postings stay within
 * `postingsShare` times the query's own terms' postings, or `minPostings`, whichever is more.
 */
export interface FeedbackCap {
  minIdf: number;
  postingsShare: number;
  minPostings: number;
}

export const FEEDBACK_CAP: FeedbackCap = { minIdf: 0.5, postingsShare: 1, minPostings: 2_000 };

/** The principal of everyone in a tenant (docs/adr/0008): what they read, every member may. */
export const EVERYONE = 't:*';
/** How many tenant-wide chunks weigh as much as the reference in `blendedIdf`. */
export const PRIOR_CHUNKS = 100;

/**
 * `LEXICAL_IDF=tenant` (docs/adr/0056): the idf over the n chunks everyone in the tenant may read,
 * blended with the reference idf by n/(n + PRIOR_CHUNKS): the reference alone with no such chunk,
 * the tenant's own statistics once it has many.
 */
export function blendedIdf(referenceIdf: number, df: number, n: number): number {
  const share = n / (n + PRIOR_CHUNKS);
  const own = n > 0 ? Math.log(1 + (n - df + 0.5) / (df + 0.5)) : 0;
  return share * own + (1 - share) * referenceIdf;
}

const DF_CACHED = 20_000;

/** A posting list in ascending chunk order, with its largest count. */
export function postingList(list: { ordinals: number[]; tfs: number[] }): PostingList {
  let pairs = list.ordinals.map((o, i) => [o, list.tfs[i]!] as const);
  if (pairs.some(([o], i) => i > 0 && o < pairs[i - 1]![0])) {
    pairs = [...pairs].sort((x, y) => x[0] - y[0]);
  }
  return {
    size: pairs.length,
    ordinals: Int32Array.from(pairs, ([o]) => o),
    tfs: Int32Array.from(pairs, ([, tf]) => tf),
    maxTf: pairs.reduce((max, [, tf]) => Math.max(max, tf), 0),
  };
}

/** The lexeme's df over the readable chunks: a pass over its postings, once per snapshot. */
export function dfOf(readers: Readers, lexeme: string, list: PostingList): number {
  const mask = readers.mask;
  if (!mask) return list.size;
  const known = readers.dfs.get(lexeme);
  if (known !== undefined) return known;
  let df = 0;
  for (let i = 0; i < list.size; i++) df += mask[list.ordinals[i]!]!;
  if (readers.dfs.size >= DF_CACHED) readers.dfs.clear();
  readers.dfs.set(lexeme, df);
  return df;
}

/** Each of the query's own lexemes' weight: 1, or with feedback its share of λ. */
export function ownWeight(lexemes: string[], expansion: QueryExpansion | undefined): number {
  return expansion ? expansion.queryWeight / Math.max(lexemes.length, 1) : 1;
}

/**
 * Each lexeme's weight in a search: 1, or with pseudo-relevance feedback (RM3) λ shared by the
 * query's own lexemes plus each feedback term's weight; and the lexemes only feedback gave.
 */
export function queryWeights(
  lexemes: string[],
  expansion: QueryExpansion | undefined,
): { weights: Map<string, number>; feedback: Set<string> } {
  const weights = new Map<string, number>();
  const own = ownWeight(lexemes, expansion);
  for (const lexeme of lexemes) weights.set(lexeme, own);
  const feedback = new Set<string>();
  for (const term of expansion?.terms ?? []) {
    if (!weights.has(term.lexeme)) feedback.add(term.lexeme);
    weights.set(term.lexeme, (weights.get(term.lexeme) ?? 0) + term.weight);
  }
  return { weights, feedback };
}

/**
 * The feedback terms a search keeps under `cap` (FeedbackCap), in their given order. The query's
 * own terms are never dropped. Feedback whose postings are `minPostings` or fewer in all costs
 * nothing worth sparing and is kept whole: in a small space a common term may be the only one
 * that bridges to a chunk without the query's words.
 */
export function capFeedback(own: Term[], feedback: Term[], cap: FeedbackCap): Term[] {
  if (feedback.reduce((sum, term) => sum + term.list.size, 0) <= cap.minPostings) return feedback;
  const budget = Math.max(
    cap.minPostings,
    cap.postingsShare * own.reduce((sum, term) => sum + term.list.size, 0),
  );
  const kept = new Set<Term>();
  let spent = 0;
  const byShare = feedback
    .filter((term) => term.idf >= cap.minIdf)
    .sort((x, y) => y.weight * y.idf - x.weight * x.idf);
  for (const term of byShare) {
    if (spent + term.list.size > budget) continue;
    spent += term.list.size;
    kept.add(term);
  }
  return feedback.filter((term) => kept.has(term));
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

  constructor(size: number) {
    this.scores = new Float64Array(size);
    this.seen = new Uint8Array(size);
    this.touched = new Int32Array(size);
    this.kept = new Uint8Array(size);
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
  chunks: number[],
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
  if (chunks.length * Math.log2(size + 1) < size) {
    let from = 0;
    for (const o of chunks) {
      let lo = from;
      let hi = size;
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
 * unseen chunk to the k-th best score so far, the remaining (common, long) lists only add to the
 * chunks that can still reach it, looked up instead of scanned. The chunks returned and their
 * scores are those of the exhaustive pass (sums may differ in the last bit: terms are added in
 * another order, as Postgres may). `unscanned`: the terms only added to the chunks returned
 * (`scratch.kept` marks them); any other chunk's score in `scratch` lacks their shares. Empty when
 * every chunk scored is returned.
 */
export function scoreTerms(
  terms: Term[],
  space: Space,
  scratch: Scratch,
  prune?: { topK: number; inScope: Uint8Array | null },
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
    // Only chunks scoring at least `threshold - rest` so far can still reach the top k: the rest
    // of the terms for them.
    const floor = threshold - rest;
    const kept: number[] = [];
    const { inScope } = prune;
    for (let i = 0; i < scratch.count; i++) {
      const o = touched[i]!;
      if ((!inScope || inScope[o]) && scores[o]! >= floor * (1 - SLACK)) kept.push(o);
    }
    kept.sort((x, y) => x - y);
    for (const o of kept) scratch.kept[o] = 1;
    const unscanned = order.slice(t + 1).map(({ term }) => term);
    for (const term of unscanned) addToChunks(term, kept, scratch.kept, space, scores);
    return { candidates: Int32Array.from(kept), count: kept.length, unscanned };
  }
  addTerm(order[order.length - 1]!.term, space, scratch);
  return all();
}
