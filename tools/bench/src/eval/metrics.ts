/** Ranked document ids for one query, best first. */
export type Ranking = string[];

/**
 * nDCG@k with linear gains (the trec_eval / pytrec_eval definition BEIR reports):
 * DCG = Σ rel_i / log2(i + 1) over the first k ranks, divided by the DCG of the ideal ranking.
 */
export function ndcgAt(k: number, ranking: Ranking, judged: Map<string, number>): number {
  const dcg = ranking
    .slice(0, k)
    .reduce((sum, doc, i) => sum + (judged.get(doc) ?? 0) / Math.log2(i + 2), 0);
  const ideal = [...judged.values()]
    .filter((rel) => rel > 0)
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((sum, rel, i) => sum + rel / Math.log2(i + 2), 0);
  return ideal === 0 ? 0 : dcg / ideal;
}

/** Share of the relevant documents found in the first k. */
export function recallAt(k: number, ranking: Ranking, judged: Map<string, number>): number {
  const relevant = [...judged.entries()].filter(([, rel]) => rel > 0).map(([doc]) => doc);
  if (relevant.length === 0) return 0;
  const top = new Set(ranking.slice(0, k));
  return relevant.filter((doc) => top.has(doc)).length / relevant.length;
}

/** Reciprocal rank of the first relevant document within the first k, else 0. */
export function mrrAt(k: number, ranking: Ranking, judged: Map<string, number>): number {
  const index = ranking.slice(0, k).findIndex((doc) => (judged.get(doc) ?? 0) > 0);
  return index === -1 ? 0 : 1 / (index + 1);
}

export interface Scores {
  'ndcg@10': number;
  'recall@100': number;
  'mrr@10': number;
}

/** Mean of each metric over the judged queries (a query with no results scores 0). */
export function evaluate(
  rankings: Map<string, Ranking>,
  qrels: Map<string, Map<string, number>>,
): Scores {
  const ids = [...qrels.keys()];
  const mean = (metric: (r: Ranking, j: Map<string, number>) => number): number =>
    round(
      ids.reduce((sum, id) => sum + metric(rankings.get(id) ?? [], qrels.get(id)!), 0) / ids.length,
    );
  return {
    'ndcg@10': mean((r, j) => ndcgAt(10, r, j)),
    'recall@100': mean((r, j) => recallAt(100, r, j)),
    'mrr@10': mean((r, j) => mrrAt(10, r, j)),
  };
}

const round = (x: number): number => Math.round(x * 10_000) / 10_000;

export interface Loser {
  queryId: string;
  'ndcg@10': number;
  /** The other mode that did best on this query, and its nDCG@10. */
  bestOther: string;
  'bestOther_ndcg@10': number;
}

/**
 * For each mode, the judged queries on which it lost most nDCG@10 to the best of the other modes
 * (ties and wins are not losses), worst first, at most `limit`.
 */
export function perModeLosers<M extends string>(
  rankings: Map<M, Map<string, Ranking>>,
  qrels: Map<string, Map<string, number>>,
  limit: number,
): Map<M, Loser[]> {
  const ndcg = (mode: M, id: string) =>
    ndcgAt(10, rankings.get(mode)?.get(id) ?? [], qrels.get(id)!);
  const out = new Map<M, Loser[]>();
  for (const mode of rankings.keys()) {
    const losers: Loser[] = [];
    for (const id of qrels.keys()) {
      const own = ndcg(mode, id);
      let bestOther: M | undefined;
      let best = -1;
      for (const other of rankings.keys()) {
        if (other === mode) continue;
        const score = ndcg(other, id);
        if (score > best) [best, bestOther] = [score, other];
      }
      if (bestOther !== undefined && best > own) {
        losers.push({
          queryId: id,
          'ndcg@10': round(own),
          bestOther,
          'bestOther_ndcg@10': round(best),
        });
      }
    }
    losers.sort(
      (a, b) => b['bestOther_ndcg@10'] - b['ndcg@10'] - (a['bestOther_ndcg@10'] - a['ndcg@10']),
    );
    out.set(mode, losers.slice(0, limit));
  }
  return out;
}
