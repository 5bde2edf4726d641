/** How the cross-encoder's order is fused with the first stage's (ADR 46). */
export interface RerankFusion {
  /** Reciprocal-rank constant: each list gives weight / (k + rank), ranks from 1. */
  k: number;
  /** Share of the cross-encoder's list, 0..1; the first stage gets 1 − weight. */
  weight: number;
  /** How many of the first stage's results the cross-encoder reads. */
  depth: number;
}

/**
 * The measured defaults (ADR 46): on CISI only a light cross-encoder share over a shallow depth
 * did not lose (+0.0024 ± 0.0032 nDCG@10 at 256 tokens); weight ≥ 0.5 or depth ≥ 20 lost.
 */
export const DEFAULT_RERANK_FUSION: RerankFusion = { k: 60, weight: 0.3, depth: 10 };

/**
 * Weighted reciprocal-rank fusion of the first stage's order with the cross-encoder's order of
 * that order's top `depth`. A pure function: ids in, fused order out. The first `depth` ids are
 * reordered by fused score (ties keep the first stage's order); the rest keep their places after
 * them. `reranked` must be a permutation of `first.slice(0, depth)`; ids outside it are ignored.
 */
export function fuseRerank<T>(
  first: readonly T[],
  reranked: readonly T[],
  fusion: RerankFusion,
): T[] {
  const head = first.slice(0, fusion.depth);
  const crossRank = new Map(reranked.map((id, i) => [id, i + 1]));
  const score = (id: T, firstRank: number): number =>
    (1 - fusion.weight) / (fusion.k + firstRank) +
    fusion.weight / (fusion.k + (crossRank.get(id) ?? head.length + 1));
  const fused = head
    .map((id, i) => ({ id, i, score: score(id, i + 1) }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map((entry) => entry.id);
  return [...fused, ...first.slice(fusion.depth)];
}

/** The ids ordered by the scorer's scores, best first (ties keep their order). */
export function orderByScores<T>(ids: readonly T[], scores: readonly number[]): T[] {
  return ids
    .map((id, i) => ({ id, i, score: scores[i] ?? Number.NEGATIVE_INFINITY }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map((entry) => entry.id);
}
