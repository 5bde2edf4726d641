import { z } from 'zod';
import type { FusionMethod, Strategy } from './fusion';

export const MAX_TOP_K = 100;
export const DEFAULT_TOP_K = 10;
export const SEARCH_MODES = ['hybrid', 'semantic', 'lexical'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** One search request, whichever transport it came from. Validated once, here. */
export const searchRequestSchema = z.object({
  query: z.string().trim().min(1, 'query must not be empty').max(4000),
  topK: z
    .number()
    .int()
    .min(0)
    .max(MAX_TOP_K, `topK must be at most ${MAX_TOP_K}`)
    .default(DEFAULT_TOP_K)
    .transform((k) => (k === 0 ? DEFAULT_TOP_K : k)),
  knowledgeBaseIds: z.array(z.string().min(1)).max(50).default([]),
  mode: z.enum(SEARCH_MODES).default('hybrid'),
  /** Chunks before and after each hit, from the same document only, marked `isMatch: false`. */
  neighbors: z.number().int().min(0).max(5, 'neighbors must be at most 5').default(0),
  /** Hits scoring below this are dropped (scores are in the mode's own scale). */
  minScore: z.number().finite().default(0),
  /** Cross-encoder reranking, when a reranker model is installed. */
  rerank: z.boolean().default(false),
  /** How hybrid mode fuses the two lists. */
  fusion: z.enum(['convex', 'rrf'] satisfies FusionMethod[]).default('convex'),
});
export type SearchRequest = z.infer<typeof searchRequestSchema>;

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
