import { FilterError, parseFilter, type FilterNode } from '@kb/contracts';
import { z } from 'zod';
import type { FusionMethod, Strategy } from './fusion';

export const MAX_TOP_K = 100;
/** How deep pagination reaches: `offset + topK` stays within it. */
export const MAX_RESULT_WINDOW = 200;
export const DEFAULT_MMR_LAMBDA = 0.5;
export const DEFAULT_TOP_K = 10;
export const SEARCH_MODES = ['hybrid', 'semantic', 'lexical'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** The filter language of docs/adr/0007, parsed and validated into a tree at the edge. */
export const filterSchema = z
  .unknown()
  .optional()
  .transform((raw, ctx): FilterNode | undefined => {
    try {
      return parseFilter(raw);
    } catch (error) {
      if (!(error instanceof FilterError)) throw error;
      ctx.addIssue({ code: 'custom', message: error.message });
      return z.NEVER;
    }
  });

/** One search request, whichever transport it came from. Validated once, here. */
export const searchRequestSchema = z
  .object({
    query: z.string().trim().min(1, 'query must not be empty').max(4000),
    topK: z
      .number()
      .int()
      .min(0)
      .max(MAX_TOP_K, `topK must be at most ${MAX_TOP_K}`)
      .default(DEFAULT_TOP_K)
      .transform((k) => (k === 0 ? DEFAULT_TOP_K : k)),
    /** Skip this many results: page n of size k is `offset = n·k`. */
    offset: z.number().int().min(0).default(0),
    knowledgeBaseIds: z.array(z.string().min(1).max(128)).max(50).default([]),
    mode: z.enum(SEARCH_MODES).default('hybrid'),
    filter: filterSchema,
    /** Maximal marginal relevance: re-order for diversity among the candidates. */
    mmr: z.boolean().default(false),
    /** 1 is pure relevance, 0 pure diversity. */
    mmrLambda: z.number().min(0).max(1).default(DEFAULT_MMR_LAMBDA),
    /** Chunks before and after each hit, from the same document only, marked `isMatch: false`. */
    neighbors: z.number().int().min(0).max(5, 'neighbors must be at most 5').default(0),
    /** Hits scoring below this are dropped (scores are in the mode's own scale). */
    minScore: z.number().finite().default(0),
    /** Cross-encoder reranking, when a reranker model is installed. */
    rerank: z.boolean().default(false),
    /** How hybrid mode fuses the two lists. */
    fusion: z.enum(['convex', 'rrf'] satisfies FusionMethod[]).default('convex'),
  })
  .refine((r) => r.offset + r.topK <= MAX_RESULT_WINDOW, {
    message: `offset + topK must be at most ${MAX_RESULT_WINDOW}`,
    path: ['offset'],
  });
export type SearchRequest = z.infer<typeof searchRequestSchema>;
export type SearchRequestInput = z.input<typeof searchRequestSchema>;

export interface SearchHit {
  documentId: string;
  documentVersion: number;
  chunkIndex: number;
  title: string;
  text: string;
  startOffset: number;
  endOffset: number;
  score: number;
  strategies: Strategy[];
  /** False for a neighbour added around a hit; it carries the hit's score. */
  isMatch: boolean;
}

export type DegradedReason = 'vector_search_unavailable' | 'lexical_search_unavailable';

export interface SearchResponse {
  hits: SearchHit[];
  tookMs: number;
  confidence: 'high' | 'medium' | 'low';
  rerank: 'off' | 'applied' | `skipped: ${string}`;
  /** Whether the result cache answered: `off` when no cache is configured or it was skipped. */
  cache: 'hit' | 'miss' | 'off';
  mode: SearchMode;
  mmr: 'off' | 'applied' | `skipped: ${string}`;
  /** The offset of the next page, when more results exist. */
  nextOffset?: number;
  degraded: boolean;
  degradedReason?: DegradedReason;
}

/** The part of a request that decides its answer, in one canonical form (the cache key's input). */
export function normalizeRequest(request: SearchRequest): SearchRequest {
  return {
    ...request,
    query: request.query.trim().replace(/\s+/g, ' ').toLowerCase(),
    knowledgeBaseIds: [...new Set(request.knowledgeBaseIds)].sort(),
  };
}
