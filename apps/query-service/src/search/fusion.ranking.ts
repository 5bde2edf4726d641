export type Strategy = 'semantic' | 'lexical';

/**
 * `adaptive` (the default): the convex combination with α set per query from how far each list's
 * best candidate stands out (docs/adr/0028); `convex`: the same with the deployment's fixed α
 * (the default before issue 14); `rrf`: reciprocal rank fusion, k = 60, equal weights.
 */
export type FusionMethod = 'adaptive' | 'convex' | 'rrf';
export const FUSION_METHODS = ['adaptive', 'convex', 'rrf'] as const satisfies FusionMethod[];

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

/** Each strategy's weight in a weighted fusion; a strategy not named weighs 1. */
export type StrategyWeights = Partial<Record<Strategy, number>>;

/**
 * Reciprocal rank fusion: each list contributes w / (k + rank) for every item it ranks (rank from
 * 1, w its strategy's weight, 1 by default), summed per item. Ranks, not raw scores, are fused, so
 * cosine similarities and full-text ranks need no calibration against each other. Ties keep the
 * order of first appearance.
 */
export function reciprocalRankFusion<T>(
  lists: Ranked<T>[],
  keyOf: (item: T) => string,
  k = RRF_K,
  weights: StrategyWeights = {},
): Fused<T>[] {
  const fused = new Map<string, Fused<T> & { first: number }>();
  let order = 0;
  for (const list of lists) {
    const weight = weights[list.strategy] ?? 1;
    list.items.forEach((item, index) => {
      const key = keyOf(item);
      const contribution = weight / (k + index + 1);
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

/**
 * How far a list's best score stands out of its candidates: the z-score of its top score among
 * all of them (0 with fewer than two candidates or equal scores). A semantic list whose first hit
 * is barely above the rest (every passage is somewhat similar) says little; a BM25 list whose
 * first hit is far above the rest (a rare exact term) says a lot, and the reverse.
 */
export function standout(scores: number[]): number {
  if (scores.length < 2) return 0;
  const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
  const sd = Math.sqrt(scores.reduce((a, b) => a + (b - mean) ** 2, 0) / scores.length);
  if (sd === 0) return 0;
  return Math.max(0, (Math.max(...scores) - mean) / sd);
}

/**
 * The adaptive rule's prior α₀: the semantic share when neither list stands out more than the
 * other. 0.6 had the best worst case over the judged collections (docs/adr/0028); the fixed-α
 * convex rule keeps HYBRID_SEMANTIC_WEIGHT (0.7).
 */
export const ADAPTIVE_PRIOR = 0.6;

/**
 * The semantic share α of one query's fusion: the prior α₀ (the deployment's, or the query
 * type's under `mode: auto`) scaled by each list's standout,
 * α = α₀·z_sem / (α₀·z_sem + (1 − α₀)·z_lex); α₀ when neither list stands out or one is missing.
 */
export function adaptiveSemanticWeight<T extends Scored>(
  lists: Ranked<T>[],
  prior: number,
): number {
  const scoresOf = (strategy: Strategy) =>
    lists.find((l) => l.strategy === strategy)?.items.map((i) => i.score);
  const semanticScores = scoresOf('semantic');
  const lexicalScores = scoresOf('lexical');
  if (!semanticScores || !lexicalScores) return prior;
  const semantic = prior * standout(semanticScores);
  const lexical = (1 - prior) * standout(lexicalScores);
  return semantic + lexical > 0 ? semantic / (semantic + lexical) : prior;
}

/**
 * The default hybrid fusion (docs/adr/0028): the convex combination of min-max-normalized scores
 * with α chosen per query by adaptiveSemanticWeight. Chosen by its worst case over CISI and a second
 * judged collection with three models: every fixed α and RRF weighting tried did worse somewhere.
 */
export function adaptiveCombination<T extends Scored>(
  lists: Ranked<T>[],
  keyOf: (item: T) => string,
  prior: number,
): Fused<T>[] {
  return convexCombination(lists, keyOf, adaptiveSemanticWeight(lists, prior));
}
