import type { Space, Term } from './bm25-rank';
// The constants from where they are defined (bm25-rank.ts says why).
import { BM25_B, BM25_K1 } from './bm25-search.sql';

/**
 * What a first pass by windows leaves for RM3's second (docs/adr/0063): the chunks it ranked best,
 * for the search it ran (snapshot, readers, knowledge bases and filter, mean length). A pass by
 * windows keeps no partial scores (docs/adr/0060), but its top k are chunks the second pass may
 * return too: the k-th best of their scores under the expanded query is a score the second
 * pass's k-th best reaches, so it can skip from its first window what it would otherwise only
 * skip once its own top k filled up.
 */
export class FirstTop {
  constructor(
    readonly owner: object,
    readonly key: string,
    readonly avgdl: number,
    /** Ascending ordinals. */
    readonly ordinals: Int32Array,
  ) {}

  /** The score `terms` give each of these chunks, in `ordinals`' order. */
  private scores(terms: Term[], space: Space): Float64Array {
    const chunks = this.ordinals;
    const k1 = BM25_K1;
    const b = BM25_B;
    const { lengths } = space;
    const { mask, avgdl } = space.readers;
    const scores = new Float64Array(chunks.length);
    for (const { list, weight, idf } of terms) {
      const { ordinals, tfs, size } = list;
      const weighted = weight * idf;
      let lo = 0;
      for (let c = 0; c < chunks.length && lo < size; c++) {
        const o = chunks[c]!;
        // Binary search from where the last chunk was found: the chunks are ascending.
        let hi = size;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (ordinals[mid]! < o) lo = mid + 1;
          else hi = mid;
        }
        if (lo < size && ordinals[lo] === o && (!mask || mask[o])) {
          const tf = tfs[lo]!;
          scores[c] +=
            (weighted * (tf * (k1 + 1))) / (tf + k1 * (1 - b + (b * lengths[o]!) / avgdl));
        }
      }
    }
    return scores;
  }

  /**
   * The k-th best score `terms` give these chunks, or -Infinity with fewer than k: a lower bound
   * on the k-th best of any pass over chunks that include them (same readers and scope). Sums
   * may differ in the last bit from the pass's own; `scoreWindows` leaves it `SLACK`.
   */
  kthScore(terms: Term[], space: Space, k: number): number {
    if (k <= 0 || this.ordinals.length < k) return -Infinity;
    const scores = this.scores(terms, space);
    scores.sort();
    return scores[scores.length - k]!;
  }
}
