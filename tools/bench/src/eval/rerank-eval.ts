import { readFile } from 'node:fs/promises';

import { type BeirDataset, contentOf } from './beir';
import { CrossEncoderScorer, type PassageScorer } from './cross-encoder';
import { evaluate, ndcgAt, type Ranking } from './metrics';
import { pairedDifference } from './paired';
import { fuseRerank, orderByScores, type RerankFusion } from './rerank-fusion';

/** The grid `kb-tools eval --rerank` measures (ADR 46). */
export interface RerankGrid {
  depths: number[];
  truncations: number[];
  ks: number[];
  weights: number[];
}

export const DEFAULT_RERANK_GRID: RerankGrid = {
  depths: [10, 20, 30],
  truncations: [128, 192, 256],
  ks: [10, 30, 60],
  weights: [0.3, 0.5, 0.7, 1],
};

/** Pairs scored per model run: the first stage's top is read in slices of this size (early exit). */
const SLICE = 10;

export interface RerankRow extends RerankFusion {
  truncation: number;
  'ndcg@10': number;
  'recall@100': number;
  'mrr@10': number;
  /** Mean per-query nDCG@10 gain over the first stage and its paired standard error. */
  gain: number;
  gain_se: number;
  /** Cross-encoder time per query for this depth and truncation (ms, mean over queries). */
  ms_per_query: number;
}

/**
 * Reranks each query's first-stage ranking offline: the cross-encoder scores the top
 * `max(depths)` corpus entries (title and text) in slices of ten, timed per slice, once per
 * truncation; every (truncation, depth, k, weight) of the grid then fuses that order with the first
 * stage's (`fuseRerank`, weight 1 = replace) and is scored against the judgments, with the paired
 * standard error of its per-query nDCG@10 gain. Returns one row per setting. `model` is a
 * cross-encoder folder (loaded and closed here) or any scorer the caller loaded and closes, e.g.
 * a `BiEncoderScorer` (ADR 47, "Second model measured").
 */
export async function rerankSweep(
  dataset: Pick<BeirDataset, 'corpus' | 'queries' | 'qrels'>,
  first: Map<string, Ranking>,
  model: string | PassageScorer,
  grid: RerankGrid = DEFAULT_RERANK_GRID,
  log: (line: string) => void = () => undefined,
): Promise<RerankRow[]> {
  const texts = new Map(dataset.corpus.map((entry) => [entry._id, contentOf(entry)]));
  const queries = dataset.queries.filter((q) => dataset.qrels.has(q._id));
  const ids = queries.map((q) => q._id);
  const baseline = ids.map((id) => ndcgAt(10, first.get(id) ?? [], dataset.qrels.get(id)!));
  const maxDepth = Math.max(...grid.depths);
  const scorer = typeof model === 'string' ? await CrossEncoderScorer.load(model) : model;
  const rows: RerankRow[] = [];
  try {
    for (const truncation of grid.truncations) {
      const scores = new Map<string, number[]>();
      // Cumulative milliseconds after each slice, summed over queries.
      const sliceMs = Array.from({ length: Math.ceil(maxDepth / SLICE) }, () => 0);
      for (const query of queries) {
        const top = (first.get(query._id) ?? []).slice(0, maxDepth);
        const own: number[] = [];
        const started = performance.now();
        for (let from = 0, slice = 0; from < top.length; from += SLICE, slice++) {
          const passages = top.slice(from, from + SLICE).map((id) => texts.get(id) ?? '');
          own.push(...(await scorer.score(query.text, passages, truncation)));
          sliceMs[slice]! += performance.now() - started;
        }
        scores.set(query._id, own);
      }
      log(`rerank: scored top ${maxDepth} at ${truncation} tokens`);
      for (const depth of grid.depths) {
        const slices = Math.ceil(depth / SLICE);
        const msPerQuery = (sliceMs[slices - 1] ?? 0) / Math.max(queries.length, 1);
        for (const k of grid.ks) {
          for (const weight of grid.weights) {
            // Weight 1 ignores k: measure it once.
            if (weight === 1 && k !== grid.ks[0]) continue;
            const fusion = { k, weight, depth };
            const rankings = new Map<string, Ranking>();
            for (const id of ids) {
              const ranking = first.get(id) ?? [];
              const head = ranking.slice(0, depth);
              const crossOrder = orderByScores(head, (scores.get(id) ?? []).slice(0, depth));
              rankings.set(id, fuseRerank(ranking, crossOrder, fusion));
            }
            const perQuery = ids.map((id) => ndcgAt(10, rankings.get(id)!, dataset.qrels.get(id)!));
            const { mean, se } = pairedDifference(baseline, perQuery);
            rows.push({
              truncation,
              ...fusion,
              ...evaluate(rankings, dataset.qrels),
              gain: round(mean),
              gain_se: round(se),
              ms_per_query: Math.round(msPerQuery),
            });
          }
        }
      }
    }
  } finally {
    if (typeof model === 'string') await scorer.close();
  }
  return rows;
}

/** Reads a TREC run file (`qid Q0 docid rank score tag`) into rankings, by rank. */
export async function readTrecRun(file: string): Promise<Map<string, Ranking>> {
  const entries = new Map<string, { doc: string; rank: number }[]>();
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    const [qid, , doc, rank] = line.trim().split(/\s+/);
    if (!qid || !doc || rank === undefined) continue;
    entries.set(qid, [...(entries.get(qid) ?? []), { doc, rank: Number(rank) }]);
  }
  return new Map(
    [...entries].map(([qid, list]) => [
      qid,
      list.sort((a, b) => a.rank - b.rank).map((e) => e.doc),
    ]),
  );
}

const round = (x: number): number => Math.round(x * 10_000) / 10_000;
