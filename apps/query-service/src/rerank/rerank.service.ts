import { MODEL_API_QUEUE, ModelRunQueue } from '@kb/http';
import { withSpan } from '@kb/observability';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';

import { RERANKER } from '../platform/tokens';
import type { Reranker } from '../search/cross-encoder.reranker';
import { RerankError, RerankErrorCode } from './rerank.errors';
import type { RerankRequest, RerankResponse, RerankResult } from './rerank.model';

/**
 * Orders caller-supplied passages by the cross-encoder's relevance to a query (ADR 23): the same
 * model `rerank: true` uses in a search, for callers who retrieve elsewhere. A failed model call
 * answers the passages in the caller's order and says so, as the search's rerank step does.
 * Model runs wait in their own bounded queue (`MODEL_API_QUEUE`), apart from searches' rerank
 * step: past it, 429 `model_busy` (security review N5).
 */
@Injectable()
export class RerankService {
  private readonly logger = new Logger(RerankService.name);

  private readonly queue: ModelRunQueue;

  constructor(
    @Inject(RERANKER) private readonly reranker: Reranker | null,
    @Optional() @Inject(MODEL_API_QUEUE) queue?: ModelRunQueue,
  ) {
    this.queue = queue ?? new ModelRunQueue({ name: 'rerank', concurrency: 1, maxWaiting: 16 });
  }

  async rerank(request: RerankRequest): Promise<RerankResponse> {
    const reranker = this.reranker;
    if (!reranker) {
      throw new RerankError(
        RerankErrorCode.NoCrossEncoder,
        'no cross-encoder is loaded here (RERANKER_MODEL is not set)',
      );
    }
    if (request.model !== undefined && request.model !== reranker.model) {
      throw new RerankError(
        RerankErrorCode.ModelNotServed,
        `model "${request.model}" is not served here; the cross-encoder is "${reranker.model}"`,
      );
    }
    const texts = request.documents.map((d) => (typeof d === 'string' ? d : d.text));
    const result = (index: number, score: number | null): RerankResult => ({
      index,
      relevance_score: score,
      original_rank: index + 1,
      ...(request.return_documents ? { document: { text: texts[index]! } } : {}),
    });
    const topK = request.top_k ?? request.top_n ?? texts.length;
    if (texts.length === 0) return { model: reranker.model, reranked: true, results: [] };
    // A full queue throws model_busy (429) here; a failed model run is answered below.
    const scores = await this.queue.run(async () => {
      try {
        return await withSpan(
          'kb.rerank',
          { 'kb.model': reranker.model, 'kb.candidates': texts.length },
          () => reranker.score(request.query, texts),
        );
      } catch (error) {
        this.logger.warn(`rerank failed, request order kept: ${String(error)}`);
        return null;
      }
    });
    if (!scores) {
      return {
        model: reranker.model,
        reranked: false,
        reason: 'reranker_failed',
        results: texts.slice(0, topK).map((_, i) => result(i, null)),
      };
    }
    const results = scores
      .map((score, index) => result(index, score))
      // Ties keep the request's order.
      .sort((a, b) => b.relevance_score! - a.relevance_score! || a.index - b.index)
      .slice(0, topK);
    return { model: reranker.model, reranked: true, results };
  }
}
