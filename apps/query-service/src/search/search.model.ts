import { FilterError, type FilterNode, parseFilter } from '@kb/contracts';
import { type ChunkKey, vectorId } from '@kb/vector-store';
import { z } from 'zod';

import type { FeedbackMethod } from './feedback';
import { FUSION_METHODS, type Strategy } from './fusion.ranking';
import { QUERY_TYPES } from './query-type.classifier';
import type { RerankFusion } from './rerank.fusion';

export const MAX_TOP_K = 100;
/** How deep pagination reaches: `offset + topK` stays within it. */
export const MAX_RESULT_WINDOW = 200;
export const DEFAULT_MMR_LAMBDA = 0.5;
export const DEFAULT_TOP_K = 10;
/** The longest time budget a caller may give a search (`timeoutMs`). */
export const MAX_TIMEOUT_MS = 60_000;
/** `auto` is hybrid with α chosen from the query's type (query-type.classifier.ts). */
export const SEARCH_MODES = ['hybrid', 'semantic', 'lexical', 'auto'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** Deployment-wide ranking settings (query-service config). */
export interface SearchTuning {
  /** α of the convex combination, α·semantic + (1 − α)·lexical; the adaptive rule's prior. */
  semanticWeight: number;
  /** How many of the best fused candidates the cross-encoder re-scores. */
  rerankCandidates: number;
  /** A rerank's time budget when the request gives none (`RERANK_BUDGET_MS`, docs/adr/0047). */
  rerankBudgetMs?: number | undefined;
  /** Tokens of a (query, passage) pair the cross-encoder reads (`RERANK_MAX_TOKENS`). */
  rerankMaxTokens?: number | undefined;
  /** How the cross-encoder's order is fused with the first stage's; absent means the defaults. */
  rerankFusion?: RerankFusion | undefined;
  /** Pseudo-relevance feedback of hybrid searches (docs/adr/0028); absent means `rm3`. */
  feedback?: FeedbackMethod | undefined;
  /** A search's time budget when the caller gives none (`SEARCH_TIMEOUT_MS`, docs/adr/0042). */
  timeoutMs?: number | undefined;
}

export const DEFAULT_SEARCH_TUNING: SearchTuning = {
  semanticWeight: 0.7,
  rerankCandidates: 30,
  feedback: 'rm3',
};

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
  })
  .meta({
    type: 'object',
    description:
      'Mongo-style filter over document_id, tags, uploaded_at and metadata.<key>, with $eq $ne $in ' +
      '$nin $gt $gte $lt $lte $exists $and $or; e.g. {"tags": "finance", "metadata.year": {"$gte": 2024}}.',
  });

export const knowledgeBaseIdsSchema = z
  .array(z.string().min(1).max(128))
  .max(50)
  .default([])
  .describe('Search these knowledge bases only; empty means all of the tenant.');

/** A caller's time budget for a whole search or context call (docs/adr/0042). */
export const timeoutMsSchema = z
  .number()
  .int()
  .min(1)
  .max(MAX_TIMEOUT_MS)
  .optional()
  .describe(
    'Time budget of the whole call in milliseconds (default: the deployment’s). Past it the ' +
      'answer is 504 deadline_exceeded, or the hits of the strategy that finished, marked degraded.',
  );

/** One search request, whichever transport it came from. Validated once, here. */
export const searchRequestSchema = z
  .object({
    query: z
      .string()
      .trim()
      .min(1, 'query must not be empty')
      .max(4000)
      .describe('What to look for, in natural language.'),
    topK: z
      .number()
      .int()
      .min(0)
      .max(MAX_TOP_K, `topK must be at most ${MAX_TOP_K}`)
      .default(DEFAULT_TOP_K)
      .transform((k) => (k === 0 ? DEFAULT_TOP_K : k))
      .describe('How many chunks to return (0 means the default).'),
    offset: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(`Results to skip, for pagination; offset + topK is at most ${MAX_RESULT_WINDOW}.`),
    knowledgeBaseIds: knowledgeBaseIdsSchema,
    mode: z
      .enum(SEARCH_MODES)
      .default('hybrid')
      .describe(
        'hybrid (default) fuses semantic and keyword search; semantic or lexical use one; auto is ' +
          'hybrid leaning lexical for quoted phrases, identifiers and error strings and semantic ' +
          'for questions.',
      ),
    filter: filterSchema,
    mmr: z
      .boolean()
      .default(false)
      .describe('Re-order the candidates by maximal marginal relevance, for diversity.'),
    mmrLambda: z
      .number()
      .min(0)
      .max(1)
      .default(DEFAULT_MMR_LAMBDA)
      .describe('MMR trade-off: 1 is pure relevance, 0 pure diversity.'),
    neighbors: z
      .number()
      .int()
      .min(0)
      .max(5, 'neighbors must be at most 5')
      .default(0)
      .describe('Chunks to add before and after each hit, from the same document only.'),
    minScore: z
      .number()
      .finite()
      .default(0)
      .describe("Drop hits scoring below this (in the mode's own score scale)."),
    rerank: z
      .boolean()
      .default(false)
      .describe('Cross-encoder reranking when a reranker model is installed.'),
    rerankBudgetMs: z
      .number()
      .int()
      .min(1)
      .max(60_000)
      .optional()
      .describe(
        'Milliseconds the rerank may take (default RERANK_BUDGET_MS): how many hits it re-scores follows from the model’s measured cost per hit.',
      ),
    fusion: z
      .enum(FUSION_METHODS)
      .default('adaptive')
      .describe(
        'How hybrid mode fuses the two lists: adaptive (α per query from how far each list’s best hit stands out), convex (fixed α) or rrf (k = 60).',
      ),
    timeoutMs: timeoutMsSchema,
  })
  .refine((r) => r.offset + r.topK <= MAX_RESULT_WINDOW, {
    message: `offset + topK must be at most ${MAX_RESULT_WINDOW}`,
    path: ['offset'],
  });
export type SearchRequest = z.infer<typeof searchRequestSchema>;
export type SearchRequestInput = z.input<typeof searchRequestSchema>;

export const searchHitSchema = z.object({
  documentId: z.string(),
  documentVersion: z.number().int(),
  chunkIndex: z.number().int(),
  title: z.string(),
  text: z.string(),
  /** Character offsets into the document's extracted text. */
  startOffset: z.number().int(),
  endOffset: z.number().int(),
  /** Higher is better, in the mode's own scale (fused, cosine or BM25). */
  score: z.number(),
  /** The strategies that found this chunk. */
  strategies: z.array(z.enum(['semantic', 'lexical'] satisfies Strategy[])),
  /** False for a neighbour added around a hit; it carries the hit's score. */
  isMatch: z.boolean(),
  /** The page the chunk starts on (paged formats such as PDF). */
  page: z.number().int().optional(),
  /** The Markdown headings in force where the chunk starts, outermost first. */
  headingPath: z.array(z.string()).optional(),
  // The document's own fields, read from document-service with the caller's token (absent when
  // it could not be read: the response's `details` says so).
  tags: z.array(z.string()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  contentType: z.string().optional(),
  filename: z.string().optional(),
  /** RFC 3339. */
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
});
export type SearchHit = z.infer<typeof searchHitSchema>;

/**
 * A chunk's identity across strategies and steps (`<document>#<version>#<chunk>`): the vector
 * store's own id, so the vectors it returns for MMR are found under the same key.
 */
export const chunkKey: (chunk: ChunkKey) => string = vectorId;

/** `*_timed_out`: that strategy did not finish within the search's budget (docs/adr/0042). */
const DEGRADED_REASONS = [
  'vector_search_unavailable',
  'lexical_search_unavailable',
  'vector_search_timed_out',
  'lexical_search_timed_out',
] as const;
export type DegradedReason = (typeof DEGRADED_REASONS)[number];
/** "off", "applied", or "skipped: <reason>". */
const stepOutcome = z.custom<'off' | 'applied' | `skipped: ${string}`>(
  (v) => typeof v === 'string' && /^(off|applied|skipped: .+)$/.test(v),
);

export const searchResponseSchema = z.object({
  hits: z.array(searchHitSchema),
  tookMs: z.number(),
  /** Agreement of the strategies: high (top hit found by both), medium (some), low (none). */
  confidence: z.enum(['high', 'medium', 'low']),
  rerank: stepOutcome.meta({ type: 'string', description: 'off, applied or skipped: <reason>' }),
  mmr: stepOutcome.meta({ type: 'string', description: 'off, applied or skipped: <reason>' }),
  /** Hits' document fields and locations: applied, or skipped: <reason> when some are missing. */
  details: stepOutcome.meta({ type: 'string', description: 'off, applied or skipped: <reason>' }),
  /** Whether the result cache answered: `off` when no cache is configured or it was skipped. */
  cache: z.enum(['hit', 'miss', 'off']),
  mode: z.enum(SEARCH_MODES),
  /** The query's detected type; under `mode: auto` it chose the fusion weight. */
  queryType: z.enum(QUERY_TYPES),
  /**
   * How many hits the search ranked, pages and all (neighbours not counted). `totalRelation`
   * `eq`: every matching chunk; `gte`: a strategy returned as many candidates as it was asked
   * for, so more chunks may match and `total` is a lower bound.
   */
  total: z.number().int(),
  totalRelation: z.enum(['eq', 'gte']),
  /** The offset of the next page, when more results exist. */
  nextOffset: z.number().int().optional(),
  degraded: z.boolean(),
  degradedReason: z.enum(DEGRADED_REASONS).optional(),
});
export type SearchResponse = z.infer<typeof searchResponseSchema>;

/** The part of a request that decides its answer, in one canonical form (the cache key's input). */
export function normalizeRequest(request: SearchRequest): SearchRequest {
  // The time budget decides how long to wait, not what a complete answer is.
  const { timeoutMs: _budget, ...decisive } = request;
  return {
    ...decisive,
    // Whitespace only, no case folding: a case-sensitive model or reranker may rank "US" and
    // "us" differently, so they are different searches.
    query: request.query.trim().replace(/\s+/g, ' '),
    knowledgeBaseIds: [...new Set(request.knowledgeBaseIds)].sort(),
  };
}
