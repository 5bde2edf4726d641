import { withSpan } from '@kb/observability';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { RERANKER, SEARCH_TUNING } from '../../platform/tokens';
import type { Reranker } from '../cross-encoder.reranker';
import { DEFAULT_RERANK_FUSION, fuseRerankScores } from '../rerank.fusion';
import { bestWindow } from '../rerank.window';
import type { SearchBudget } from '../search.budget';
import type { SearchHit, SearchRequest, SearchTuning } from '../search.model';
import type { StepResult } from './step.model';

export type RerankSkipReason = 'no_reranker_model' | 'reranker_failed' | 'rerank_budget_spent';

/** `RERANK_BUDGET_MS`'s default and `RERANK_MAX_TOKENS`'s (docs/adr/0047). */
export const DEFAULT_RERANK_BUDGET_MS = 150;
export const DEFAULT_RERANK_MAX_TOKENS = 256;
/** Pairs per model run: the budget is checked between runs (early exit). */
const PAIRS_PER_RUN = 4;
/**
 * While the cost estimate lets no rerank run, one search in this long runs two pairs anyway: the
 * estimate only moves when the model runs, and one made on a busy machine (a calibration while the
 * other services start measured 87 ms a pair against ~30 quiet) would skip every rerank after it.
 */
export const RERANK_PROBE_MS = 10_000;

/**
 * Re-scores the best hits with the cross-encoder and orders them by the fusion of its order with
 * the first stage's (rerank.fusion.ts; the hit's `score` becomes the fused score); the rest keep
 * their order after them. How many it re-scores comes from a latency budget (docs/adr/0047):
 * `rerankBudgetMs` (request, else RERANK_BUDGET_MS), cut to what the search's own deadline leaves,
 * over the model's measured cost per pair, at most `rerankCandidates`; runs of a few pairs stop
 * once the next would overrun. Each passage is cut to its best window for the query.
 * A missing model, a failed call or a budget too small for two pairs leaves the order as it was,
 * and says why; but while the estimate lets nothing run, a probe of two pairs every
 * `RERANK_PROBE_MS` measures the model again.
 */
@Injectable()
export class RerankStep {
  private readonly logger = new Logger(RerankStep.name);
  /** When the model last ran for a search (`performance.now()`), or the step was made. */
  private lastRun = performance.now();

  constructor(
    /** Null when no cross-encoder model is installed (RERANKER_MODEL). */
    @Inject(RERANKER) private readonly reranker: Reranker | null,
    @Inject(SEARCH_TUNING) private readonly tuning: SearchTuning,
  ) {}

  async run(
    hits: SearchHit[],
    request: Pick<SearchRequest, 'rerank' | 'query' | 'rerankBudgetMs'>,
    search?: Pick<SearchBudget, 'spareMs'>,
  ): Promise<StepResult<RerankSkipReason>> {
    if (!request.rerank) return { hits, outcome: 'off' };
    const reranker = this.reranker;
    if (!reranker) return { hits, outcome: { skipped: 'no_reranker_model' } };
    const budgetMs = Math.min(
      request.rerankBudgetMs ?? this.tuning.rerankBudgetMs ?? DEFAULT_RERANK_BUDGET_MS,
      search?.spareMs() ?? Number.POSITIVE_INFINITY,
    );
    const candidates = Math.min(this.tuning.rerankCandidates, hits.length);
    let depth = Math.min(candidates, Math.floor(budgetMs / Math.max(reranker.msPerPair, 0.001)));
    const now = performance.now();
    const probe =
      depth < 2 &&
      candidates >= 2 &&
      now - this.lastRun >= RERANK_PROBE_MS &&
      (search?.spareMs() ?? Number.POSITIVE_INFINITY) >= 2 * reranker.msPerPair;
    if (probe) depth = 2;
    if (depth < 2) return { hits, outcome: { skipped: 'rerank_budget_spent' } };
    this.lastRun = now;
    const maxTokens = this.tuning.rerankMaxTokens ?? DEFAULT_RERANK_MAX_TOKENS;
    const passages = hits.slice(0, depth).map((hit) => passageOf(hit, request.query, maxTokens));
    let scores: number[];
    try {
      scores = await withSpan(
        'kb.rerank',
        { 'kb.model': reranker.model, 'kb.candidates': depth, 'kb.budget_ms': budgetMs },
        () => scoreWithin(reranker, request.query, passages, budgetMs),
      );
    } catch (error) {
      this.logger.warn(`rerank failed, fused order kept: ${String(error)}`);
      return { hits, outcome: { skipped: 'reranker_failed' } };
    }
    if (scores.length < 2) return { hits, outcome: { skipped: 'rerank_budget_spent' } };
    const fused = fuseRerankScores(scores, this.tuning.rerankFusion ?? DEFAULT_RERANK_FUSION);
    const rescored = hits
      .slice(0, scores.length)
      .map((hit, i) => ({ hit: { ...hit, score: fused[i]! }, i }))
      .sort((a, b) => b.hit.score - a.hit.score || a.i - b.i)
      .map(({ hit }) => hit);
    return { hits: [...rescored, ...hits.slice(scores.length)], outcome: 'applied' };
  }
}

/** Scores the passages in runs of a few, in order, and stops before a run that would overrun. */
async function scoreWithin(
  reranker: Reranker,
  query: string,
  passages: string[],
  budgetMs: number,
): Promise<number[]> {
  const started = performance.now();
  const scores: number[] = [];
  for (let i = 0; i < passages.length; i += PAIRS_PER_RUN) {
    const run = passages.slice(i, i + PAIRS_PER_RUN);
    const spent = performance.now() - started;
    if (i > 0 && spent + reranker.msPerPair * run.length > budgetMs) break;
    scores.push(...(await reranker.score(query, run)));
  }
  return scores;
}

/** The title, then the text's best window for the query within what the model reads. */
function passageOf(hit: SearchHit, query: string, maxTokens: number): string {
  const titleTokens = Math.ceil(hit.title.split(/\s+/).length * 1.3);
  return `${hit.title}\n${bestWindow(hit.text, query, Math.max(32, maxTokens - titleTokens))}`;
}
