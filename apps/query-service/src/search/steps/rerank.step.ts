import { withSpan } from '@kb/observability';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { RERANKER, SEARCH_TUNING } from '../../platform/tokens';
import type { Reranker } from '../cross-encoder.reranker';
import { DEFAULT_RERANK_FUSION, fuseRerankScores } from '../rerank.fusion';
import type { SearchHit, SearchRequest, SearchTuning } from '../search.model';
import type { StepResult } from './step.model';

export type RerankSkipReason = 'no_reranker_model' | 'reranker_failed';

/**
 * Re-scores the best `rerankCandidates` hits with the cross-encoder and orders them by the fusion
 * of its order with the first stage's (rerank.fusion.ts; the hit's `score` becomes the fused
 * score); the rest keep their order after them.
 * A missing model or a failed call leaves the order as it was, and says why.
 */
@Injectable()
export class RerankStep {
  private readonly logger = new Logger(RerankStep.name);

  constructor(
    /** Null when no cross-encoder model is installed (RERANKER_MODEL). */
    @Inject(RERANKER) private readonly reranker: Reranker | null,
    @Inject(SEARCH_TUNING) private readonly tuning: SearchTuning,
  ) {}

  async run(
    hits: SearchHit[],
    request: Pick<SearchRequest, 'rerank' | 'query'>,
  ): Promise<StepResult<RerankSkipReason>> {
    if (!request.rerank) return { hits, outcome: 'off' };
    const reranker = this.reranker;
    if (!reranker) return { hits, outcome: { skipped: 'no_reranker_model' } };
    const head = hits.slice(0, this.tuning.rerankCandidates);
    let scores: number[];
    try {
      scores = await withSpan(
        'kb.rerank',
        { 'kb.model': reranker.model, 'kb.candidates': head.length },
        () =>
          reranker.score(
            request.query,
            head.map((hit) => `${hit.title}\n${hit.text}`),
          ),
      );
    } catch (error) {
      this.logger.warn(`rerank failed, fused order kept: ${String(error)}`);
      return { hits, outcome: { skipped: 'reranker_failed' } };
    }
    const fused = fuseRerankScores(scores, this.tuning.rerankFusion ?? DEFAULT_RERANK_FUSION);
    const rescored = head
      .map((hit, i) => ({ hit: { ...hit, score: fused[i]! }, i }))
      .sort((a, b) => b.hit.score - a.hit.score || a.i - b.i)
      .map(({ hit }) => hit);
    return { hits: [...rescored, ...hits.slice(head.length)], outcome: 'applied' };
  }
}
