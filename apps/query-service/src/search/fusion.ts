export type Strategy = 'semantic' | 'lexical';

export interface Ranked<T> {
  strategy: Strategy;
  /** Best first. */
  items: T[];
}

export interface Fused<T> {
  item: T;
  score: number;
  strategies: Strategy[];
}

/** Reciprocal rank fusion's damping constant (Cormack, Clarke & Büttcher, SIGIR 2009, used k = 60). */
export const RRF_K = 60;

/**
 * Reciprocal rank fusion: each list contributes 1 / (k + rank) for every item it ranks (rank from
 * 1), summed per item. Ranks, not raw scores, are fused, so cosine similarities and full-text
 * ranks need no calibration against each other. Ties keep the order of first appearance.
 */
export function reciprocalRankFusion<T>(
  lists: Ranked<T>[],
  keyOf: (item: T) => string,
  k = RRF_K,
): Fused<T>[] {
  const fused = new Map<string, Fused<T> & { first: number }>();
  let order = 0;
  for (const list of lists) {
    list.items.forEach((item, index) => {
      const key = keyOf(item);
      const contribution = 1 / (k + index + 1);
      const existing = fused.get(key);
      if (existing) {
        existing.score += contribution;
        if (!existing.strategies.includes(list.strategy)) existing.strategies.push(list.strategy);
      } else {
        fused.set(key, { item, score: contribution, strategies: [list.strategy], first: order++ });
      }
    });
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.first - b.first)
    .map(({ item, score, strategies }) => ({ item, score, strategies }));
}
