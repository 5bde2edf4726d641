import type { TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';

import {
  filterSchema,
  knowledgeBaseIdsSchema,
  SEARCH_MODES,
  type SearchHit,
  type SearchRequest,
  searchRequestSchema,
} from '../search/search.model';
import { SearchService } from '../search/search.service';
import { packContext, packedContextSchema } from './context.packing';

export const retrieveContextSchema = z.object({
  question: z.string().trim().min(1, 'question must not be empty').max(4000),
  tokenBudget: z
    .number()
    .int()
    .min(0)
    .max(32_000, 'tokenBudget must be at most 32000')
    .default(2000)
    .transform((b) => (b === 0 ? 2000 : b))
    .refine((b) => b >= 64, 'tokenBudget must be at least 64'),
  candidates: z
    .number()
    .int()
    .min(0)
    .max(100, 'candidates must be at most 100')
    .default(20)
    .transform((c) => (c === 0 ? 20 : c)),
  mode: z.enum(SEARCH_MODES).default('hybrid'),
  knowledgeBaseIds: knowledgeBaseIdsSchema,
  filter: filterSchema,
});
export type RetrieveContextRequest = z.infer<typeof retrieveContextSchema>;

export const retrieveContextResponseSchema = packedContextSchema.extend({
  degraded: z.boolean(),
  degradedReason: z.string().optional(),
});
export type RetrieveContextResponse = z.infer<typeof retrieveContextResponseSchema>;

/** Context for the LLM orchestrator: search, then merge, deduplicate and pack to the budget. */
@Injectable()
export class ContextService {
  constructor(@Inject(SearchService) private readonly search: Pick<SearchService, 'search'>) {}

  async retrieve(
    tenantId: TenantId,
    request: RetrieveContextRequest,
    principals?: string[],
  ): Promise<RetrieveContextResponse & { hits: SearchHit[] }> {
    // The search defaults (no paging, MMR, rerank or neighbours; convex fusion) are the schema's.
    // The filter was parsed with the rest of the context request: it joins the parsed search.
    const search: SearchRequest = {
      ...searchRequestSchema.parse({
        query: request.question,
        topK: request.candidates,
        knowledgeBaseIds: request.knowledgeBaseIds,
        mode: request.mode,
      }),
      filter: request.filter,
    };
    const result = await this.search.search(tenantId, search, principals);
    return {
      hits: result.hits,
      ...packContext(result.hits, request.tokenBudget),
      degraded: result.degraded,
      ...(result.degradedReason ? { degradedReason: result.degradedReason } : {}),
    };
  }
}
