import type { IndexSpace } from '@kb/contracts';
import type { VectorStore } from '@kb/vector-store';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { VECTOR_STORE } from '../../platform/tokens';
import { maximalMarginalRelevance } from '../mmr.ranking';
import { chunkKey, type SearchHit, type SearchRequest } from '../search.model';
import type { StepResult } from './step.model';

export type DiversifySkipReason = 'several_vector_spaces' | 'vector_search_unavailable';

/**
 * Re-orders the best `pool` hits by maximal marginal relevance over their stored vectors; the
 * rest keep their order after them. Skipped, with the order kept, when the hits come from
 * several index spaces (vectors of different models cannot be compared with each other) or when
 * the vectors cannot be read.
 */
@Injectable()
export class DiversifyStep {
  private readonly logger = new Logger(DiversifyStep.name);

  constructor(@Inject(VECTOR_STORE) private readonly vectors: Pick<VectorStore, 'fetchVectors'>) {}

  async run(
    hits: SearchHit[],
    spaces: IndexSpace[],
    request: Pick<SearchRequest, 'mmr' | 'mmrLambda'>,
    pool: number,
  ): Promise<StepResult<DiversifySkipReason>> {
    if (!request.mmr) return { hits, outcome: 'off' };
    const [space, ...others] = spaces;
    if (space === undefined || others.length > 0) {
      return { hits, outcome: { skipped: 'several_vector_spaces' } };
    }
    const head = hits.slice(0, pool);
    let vectors: Map<string, number[]>;
    try {
      vectors = await this.vectors.fetchVectors(space, head);
    } catch (error) {
      this.logger.warn(`MMR skipped, vectors unavailable: ${String(error)}`);
      return { hits, outcome: { skipped: 'vector_search_unavailable' } };
    }
    const byKey = new Map(head.map((hit) => [chunkKey(hit), hit]));
    const order = maximalMarginalRelevance(
      head.map((hit) => ({
        key: chunkKey(hit),
        relevance: hit.score,
        vector: vectors.get(chunkKey(hit)),
      })),
      request.mmrLambda,
      head.length,
    );
    return {
      hits: [...order.map((key) => byKey.get(key)!), ...hits.slice(pool)],
      outcome: 'applied',
    };
  }
}
