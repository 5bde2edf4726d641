import { type PostingList, Scratch, shareBound, SLACK, type Space, type Term } from './bm25-rank';
// The constants from where they are defined (bm25-rank.ts says why).
import { BM25_B, BM25_K1 } from './bm25-search.sql';

/**
 * Ordinals per window (a power of two). Smaller windows bound a term's share more tightly where
 * similar chunks lie together (a document's chunks are adjacent in a snapshot) and cost more
 * per-window bookkeeping (each term's bound in each window a search reaches): 512 is about one CISI
 * document's copies in `bench query --scale 500`'s tenant, 1,954 windows at a million chunks
 * (docs/adr/0060).
 */
export const WINDOW_BITS = 9;
const WINDOW = 1 << WINDOW_BITS;

/**
 * A posting list cut at the window boundaries: for each non-empty window (ascending), its number,
 * where its postings start, and its largest count and shortest chunk, which bound the share any
 * of its postings can add (`Blocks.starts` has one more entry, the list's size).
 */
interface Blocks {
  lengths: Int32Array;
  windows: Int32Array;
  starts: Int32Array;
  maxTfs: Int32Array;
  minLengths: Int32Array;
}

const blocksByList = new WeakMap<PostingList, Blocks>();

/** The list's blocks over a space's lengths, built on first use and kept with the list. */
export function blocksOf(list: PostingList, lengths: Int32Array): Blocks {
  const held = blocksByList.get(list);
  if (held?.lengths === lengths) return held;
  const { ordinals, tfs, size } = list;
  let count = 0;
  for (let i = 0, last = -1; i < size; i++) {
    const w = ordinals[i]! >> WINDOW_BITS;
    if (w !== last) {
      count++;
      last = w;
    }
  }
  const blocks: Blocks = {
    lengths,
    windows: new Int32Array(count),
    starts: new Int32Array(count + 1),
    maxTfs: new Int32Array(count),
    minLengths: new Int32Array(count),
  };
  let b = -1;
  for (let i = 0, last = -1; i < size; i++) {
    const o = ordinals[i]!;
    const w = o >> WINDOW_BITS;
    if (w !== last) {
      b++;
      last = w;
      blocks.windows[b] = w;
      blocks.starts[b] = i;
      blocks.minLengths[b] = lengths[o]!;
    }
    if (tfs[i]! > blocks.maxTfs[b]!) blocks.maxTfs[b] = tfs[i]!;
    if (lengths[o]! < blocks.minLengths[b]!) blocks.minLengths[b] = lengths[o]!;
  }
  blocks.starts[count] = size;
  blocksByList.set(list, blocks);
  return blocks;
}

/** A bounded min-heap of the k best scores so far: its root is the k-th best once full. */
class KBest {
  private readonly heap: Float64Array;
  private size = 0;

  constructor(private readonly k: number) {
    this.heap = new Float64Array(k);
  }

  /** The k-th best score so far, or -Infinity while fewer than k were offered. */
  get threshold(): number {
    return this.size < this.k ? -Infinity : this.heap[0]!;
  }

  offer(score: number): void {
    const { heap, k } = this;
    if (this.size < k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent]! <= score) break;
        heap[i] = heap[parent]!;
        i = parent;
      }
      heap[i] = score;
      return;
    }
    if (!(score > heap[0]!)) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= k) break;
      const child = left + 1 < k && heap[left + 1]! < heap[left]! ? left + 1 : left;
      if (heap[child]! >= score) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = score;
  }
}

/** The arrays one window is scored into, reused across searches (a search runs synchronously). */
const local = {
  scores: new Float64Array(WINDOW),
  seen: new Uint8Array(WINDOW),
  touched: new Int32Array(WINDOW),
};

/**
 * The top k of the terms' readable postings in scope, document at a time by windows of `WINDOW`
 * ordinals, with block-max MaxScore (Ding and Suel, SIGIR 2011; Chakrabarti et al., ICDE 2011;
 * docs/adr/0060): a window whose terms' block bounds cannot reach the k-th best score so far is
 * skipped whole; in the others the terms are split where the bounds of the rest (the common
 * ones) cannot lift a chunk to it on their own: the first are scanned, the rest only looked up
 * for the chunks that can still reach it, dropping those that no longer can after each term.
 *
 * Every chunk returned has its exact score in `scratch.scores`, the terms added in one order for
 * every chunk (largest global bound first), so equal chunks score the same double wherever they
 * lie; sums may differ from the exhaustive pass's in the last bit, as Postgres' may (ADR 55).
 * Returned: the chunks in scope that scored at least the final k-th best (ascending), more than
 * k only on ties. Unlike `scoreTerms`, nothing else is left in `scratch`, so RM3's second pass
 * cannot start from it (docs/adr/0058): it ranks in full, by windows too, from `prune.atLeast`
 * when the first pass's top k give one (docs/adr/0063).
 */
export function scoreWindows(
  terms: Term[],
  space: Space,
  scratch: Scratch,
  prune: {
    topK: number;
    inScope: Uint8Array | null;
    /** A score the k-th best is known to reach: windows are skipped against it from the first. */
    atLeast?: number | undefined;
  },
): { candidates: Int32Array; count: number; unscanned: Term[] } {
  const k1 = BM25_K1;
  const b = BM25_B;
  const saturation = k1 + 1;
  const { lengths } = space;
  const { mask, avgdl } = space.readers;
  const { inScope } = prune;
  // Largest bound first: the rare terms, the ones worth scanning.
  const order = [...terms].sort((x, y) => shareBound(y, space) - shareBound(x, space));
  const n = order.length;
  const lists = order.map((term) => term.list);
  const weighted = Float64Array.from(order, (term) => term.weight * term.idf);
  const blocks = lists.map((list) => blocksOf(list, lengths));
  const cursor = new Int32Array(n);
  const bound = new Float64Array(n);
  const rest = new Float64Array(n + 1);
  const best = new KBest(prune.topK);
  const atLeast = prune.atLeast ?? -Infinity;
  const { scores: windowScores, seen, touched: windowTouched } = local;
  const out = scratch.touched;
  let outCount = 0;
  const blockBound = (t: number, block: Blocks, c: number): number => {
    const most = block.maxTfs[c]!;
    const shortest = k1 * (1 - b + (b * block.minLengths[c]!) / avgdl);
    return (weighted[t]! * (most * saturation)) / (most + shortest);
  };
  for (;;) {
    let w = Infinity;
    for (let t = 0; t < n; t++) {
      const c = cursor[t]!;
      if (c < blocks[t]!.windows.length && blocks[t]!.windows[c]! < w) w = blocks[t]!.windows[c]!;
    }
    if (w === Infinity) break;
    let upper = 0;
    for (let t = 0; t < n; t++) {
      const block = blocks[t]!;
      const c = cursor[t]!;
      bound[t] = c < block.windows.length && block.windows[c] === w ? blockBound(t, block, c) : 0;
      upper += bound[t]!;
    }
    const threshold = Math.max(best.threshold, atLeast) * (1 - SLACK);
    if (upper >= threshold) {
      rest[n] = 0;
      for (let t = n; t-- > 0;) rest[t] = rest[t + 1]! + bound[t]!;
      // The first `essential` terms are scanned: without them a chunk cannot reach the threshold.
      let essential = 1;
      while (essential < n && rest[essential]! >= threshold) essential++;
      const base = w << WINDOW_BITS;
      let count = 0;
      for (let t = 0; t < essential; t++) {
        if (bound[t] === 0) continue;
        const { ordinals, tfs } = lists[t]!;
        const c = cursor[t]!;
        const share = weighted[t]!;
        for (let i = blocks[t]!.starts[c]!, end = blocks[t]!.starts[c + 1]!; i < end; i++) {
          const o = ordinals[i]!;
          if ((mask && !mask[o]) || (inScope && !inScope[o])) continue;
          const j = o - base;
          const tf = tfs[i]!;
          const add = (share * (tf * saturation)) / (tf + k1 * (1 - b + (b * lengths[o]!) / avgdl));
          if (seen[j]) windowScores[j] += add;
          else {
            seen[j] = 1;
            windowScores[j] = add;
            windowTouched[count++] = j;
          }
        }
      }
      for (let i = 0; i < count; i++) seen[windowTouched[i]!] = 0;
      // The rest, looked up for the chunks that can still reach the threshold, in chunk order.
      if (essential < n && count > 1) windowTouched.subarray(0, count).sort();
      for (let t = essential; t < n && count > 0; t++) {
        let left = 0;
        for (let i = 0; i < count; i++) {
          const j = windowTouched[i]!;
          if (windowScores[j]! + rest[t]! >= threshold) windowTouched[left++] = j;
        }
        count = left;
        if (bound[t] === 0 || count === 0) continue;
        const { ordinals, tfs } = lists[t]!;
        const c = cursor[t]!;
        const share = weighted[t]!;
        let i = blocks[t]!.starts[c]!;
        const end = blocks[t]!.starts[c + 1]!;
        for (let m = 0; m < count && i < end; m++) {
          const o = base + windowTouched[m]!;
          while (i < end && ordinals[i]! < o) i++;
          if (i < end && ordinals[i] === o) {
            const tf = tfs[i]!;
            windowScores[o - base] +=
              (share * (tf * saturation)) / (tf + k1 * (1 - b + (b * lengths[o]!) / avgdl));
          }
        }
      }
      for (let i = 0; i < count; i++) {
        const j = windowTouched[i]!;
        const score = windowScores[j]!;
        if (!(score >= threshold)) continue;
        best.offer(score);
        const o = base + j;
        scratch.scores[o] = score;
        out[outCount++] = o;
      }
    }
    for (let t = 0; t < n; t++) if (blocks[t]!.windows[cursor[t]!] === w) cursor[t]++;
  }
  // Those that fell below the final k-th best are left out (their scores put back to 0).
  const final = Math.max(best.threshold, atLeast) * (1 - SLACK);
  let kept = 0;
  for (let i = 0; i < outCount; i++) {
    const o = out[i]!;
    if (scratch.scores[o]! >= final) out[kept++] = o;
    else scratch.scores[o] = 0;
  }
  for (let i = 0; i < kept; i++) scratch.seen[out[i]!] = 1;
  scratch.count = kept;
  return { candidates: out, count: kept, unscanned: [] };
}
