export type Strategy = 'semantic' | 'lexical';

export type FusionMethod = 'convex' | 'rrf';

export interface Ranked<T> {
  strategy: Strategy;
  /** Best first. */
  items: T[];
}

export interface Scored {
  score: number;
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

/**
 * Convex combination of min-max-normalized scores: α·semantic + (1 − α)·lexical, each list's
 * scores mapped to [0, 1] over its own candidates, an item missing from a list counting 0 there.
 * Bruch, Gai and Ingber ("An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS 2023)
 * found it more effective than RRF and showed that α needs only a few judged queries to tune. The
 * service passes HYBRID_SEMANTIC_WEIGHT (default 0.7, chosen on CISI: docs/adr/0005); 0.5 here
 * weighs both strategies equally.
 */
export function convexCombination<T extends Scored>(
  lists: Ranked<T>[],
  keyOf: (item: T) => string,
  alpha = 0.5,
): Fused<T>[] {
  const weight = (strategy: Strategy): number =>
    lists.length === 1 ? 1 : strategy === 'semantic' ? alpha : 1 - alpha;
  const fused = new Map<string, Fused<T> & { first: number }>();
  let order = 0;
  for (const list of lists) {
    const scores = list.items.map((item) => item.score);
    const max = Math.max(...scores);
    const min = Math.min(...scores);
    for (const item of list.items) {
      const normalized = max === min ? 1 : (item.score - min) / (max - min);
      const contribution = weight(list.strategy) * normalized;
      const key = keyOf(item);
      const existing = fused.get(key);
      if (existing) {
        existing.score += contribution;
        if (!existing.strategies.includes(list.strategy)) existing.strategies.push(list.strategy);
      } else {
        fused.set(key, { item, score: contribution, strategies: [list.strategy], first: order++ });
      }
    }
  }
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.first - b.first)
    .map(({ item, score, strategies }) => ({ item, score, strategies }));
}
