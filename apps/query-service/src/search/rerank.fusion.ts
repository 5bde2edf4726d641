/** How the cross-encoder's order is fused with the first stage's (RERANK_FUSION_*, measured in docs/adr/0046). */
export interface RerankFusion {
  /** Reciprocal-rank constant: a list gives share / (k + rank), ranks from 1. */
  k: number;
  /** The cross-encoder's share, 0..1; the first stage's order gets 1 − weight. */
  weight: number;
}

export const DEFAULT_RERANK_FUSION: RerankFusion = { k: 60, weight: 0.3 };

/**
 * The one fusion rule of `rerank: true`: weighted reciprocal rank of the first stage's order (the
 * position in `crossScores`) and the cross-encoder's order (by `crossScores`, best first). Returns
 * each position's fused score; ties in the model's scores share the better rank.
 */
export function fuseRerankScores(crossScores: readonly number[], fusion: RerankFusion): number[] {
  const byModel = crossScores.map((score, i) => ({ score, i })).sort((a, b) => b.score - a.score);
  const modelRank = new Array<number>(crossScores.length);
  byModel.forEach(({ score, i }, at) => {
    const previous = byModel[at - 1];
    modelRank[i] = previous && previous.score === score ? modelRank[previous.i]! : at + 1;
  });
  return crossScores.map(
    (_, i) => (1 - fusion.weight) / (fusion.k + i + 1) + fusion.weight / (fusion.k + modelRank[i]!),
  );
}
