import {
  accessConfigSchema,
  authConfigSchema,
  baseConfigSchema,
  embeddingConfigSchema,
  env,
  httpConfigSchema,
  kafkaConfigSchema,
  loadConfig,
  modelApiConfigSchema,
  rateLimitConfigSchema,
  redisConfigSchema,
  requireEmbeddingProviderSettings,
  vectorStoreConfigSchema,
} from '@kb/config';
import { WINDOWED_FROM } from '@kb/lexical-index';
import { z } from 'zod';

import { FEEDBACK_METHODS } from '../search/feedback';

export const queryConfigSchema = baseConfigSchema
  .extend(httpConfigSchema(3005).shape)
  .extend(embeddingConfigSchema.shape)
  .extend(vectorStoreConfigSchema.shape)
  .extend(kafkaConfigSchema.shape)
  .extend(authConfigSchema.shape)
  .extend(accessConfigSchema.shape)
  .extend(redisConfigSchema.shape)
  .extend(rateLimitConfigSchema.shape)
  // POST /v1/rerank's own queue for the cross-encoder, apart from searches' rerank step.
  .extend(modelApiConfigSchema.shape)
  .extend({
    KAFKA_GROUP_ID: z.string().default('query-service'),
    GRPC_HOST: z.string().default('127.0.0.1'),
    GRPC_PORT: env.port(50051),
    /** Postgres holding the lexical index that indexing-service writes. */
    DATABASE_URL: env.url(),
    SEARCH_CACHE_TTL_SECONDS: env.positiveInt(300),
    /**
     * α of the fixed-α convex combination (`fusion: convex`): α·semantic + (1 − α)·lexical. 0.7
     * was chosen on CISI (docs/adr/0005-hybrid-retrieval.md); the default rule, `adaptive`, sets α
     * per query instead (docs/adr/0028). Tune it on your own judgments with `npm run eval`.
     */
    HYBRID_SEMANTIC_WEIGHT: z.coerce.number().min(0).max(1).default(0.7),
    /**
     * Pseudo-relevance feedback of hybrid searches: `rm3` (default) searches the lexical side again
     * with the query expanded from the best fused hits and fuses again; `none` keeps the first
     * pass (the behaviour before, one lexical search per query). docs/adr/0028.
     */
    PSEUDO_RELEVANCE_FEEDBACK: z.enum(FEEDBACK_METHODS).default('rm3'),
    /**
     * The time budget of a search (REST and MCP) or context call whose caller gives none: a gRPC
     * deadline or a REST `timeoutMs` replaces it. Past it the answer is 504 / DEADLINE_EXCEEDED, or
     * the strategy that finished, marked degraded (docs/adr/0042).
     */
    SEARCH_TIMEOUT_MS: env.positiveInt(5000),
    /**
     * Chunks of lexical index held in memory for BM25 (a snapshot per index space, kept while
     * its index generation holds; docs/adr/0029). A larger space, typed syntax and filters are
     * searched in Postgres. 0: every search in Postgres. `auto` (default): sized from the memory
     * the process may use, at least 250,000 (docs/adr/0055, "Sized from memory").
     */
    LEXICAL_MEMORY_CHUNKS: z
      .union([z.literal('auto'), z.coerce.number().int().min(0)])
      .default('auto'),
    /**
     * Postings (8 bytes each) held across those snapshots, least recently used lexemes evicted
     * first; a search whose lexemes were evicted reads them again from Postgres. `auto`
     * (default): sized with the chunks, at least 4,000,000.
     */
    LEXICAL_MEMORY_POSTINGS: z
      .union([z.literal('auto'), z.coerce.number().int().min(1)])
      .default('auto'),
    /**
     * The statistics BM25 in memory weighs terms with (docs/adr/0056): `readable` (default) counts
     * N, avgdl and df over the chunks the caller may read (docs/adr/0019); `reference` takes a
     * fixed English idf table and mean length, the same for every caller (no df counted), as the
     * sparse vectors do; `tenant` blends in the statistics of the chunks everyone in the tenant
     * may read (`t:*`), which reveal nothing to a member. Searches in Postgres (typed syntax,
     * larger spaces) stay `readable`.
     */
    LEXICAL_IDF: z.enum(['readable', 'reference', 'tenant']).default('readable'),
    /**
     * Holds RM3's feedback terms to what they may cost in memory (drops those in most chunks, and
     * keeps the rest within the query's own postings or 2,000; docs/adr/0056). false: uncapped.
     */
    LEXICAL_FEEDBACK_CAP: env.bool(true),
    /**
     * From this many chunks a space's BM25 passes in memory score document at a time by windows
     * with block bounds, and RM3's second pass ranks in full instead of from the first pass's
     * scores (docs/adr/0060). 0: every space; a number over any space's size: never.
     */
    LEXICAL_WINDOWED_FROM: z.coerce.number().int().min(0).default(WINDOWED_FROM),
    /**
     * How long a new process may spend taking up what the last one held in memory (each space's
     * snapshot and its posting lists, kept in Redis) before it reports ready (docs/adr/0062):
     * past it, it is ready and goes on warming behind its searches. 0: no warm start.
     */
    LEXICAL_WARM_TIMEOUT_MS: z.coerce.number().int().min(0).default(120_000),
    /** How often what it holds is written down for the next process (and at shutdown). */
    LEXICAL_WARM_SAVE_INTERVAL_MS: env.positiveInt(300_000),
    /**
     * The Redis key that set is kept under: one per deployment (the local scripts give each stack
     * of services its own, so tests never take up a benchmark's set).
     */
    LEXICAL_WARM_KEY: z.string().min(1).default('kb:lexical:warm:v1'),
    /**
     * Cross-encoder for `rerank: true`: a sub-folder of RERANKER_MODEL_DIR (default: the embedding
     * model folder) holding a BERT sequence classifier in ONNX; it also serves POST /v1/rerank.
     * `npm start` and the chart name ms-marco-MiniLM-L-12-v2, which fetch-model.sh installs (ADR
     * 44). Unset or `none`: rerank requests answer "skipped: no_reranker_model" and /v1/rerank
     * 503. Set but not loadable: the service does not start (ADR 23).
     */
    RERANKER_MODEL: z.string().min(1).optional(),
    RERANKER_MODEL_DIR: z.string().min(1).optional(),
    /**
     * The most hits a rerank re-scores; how many it does re-score comes from RERANK_BUDGET_MS over
     * the model's measured cost per hit (docs/adr/0047). RERANK_THREADS: onnxruntime threads of
     * the cross-encoder's worker thread.
     */
    RERANK_CANDIDATES: z.coerce.number().int().min(1).max(200).default(10),
    RERANK_BUDGET_MS: z.coerce.number().int().min(1).default(150),
    RERANK_THREADS: z.coerce.number().int().min(1).max(16).default(2),
    /**
     * Fusion of the cross-encoder's order with the first stage's: weighted reciprocal rank,
     * (1 − weight)/(k + first rank) + weight/(k + cross-encoder rank), over the first stage's top
     * RERANK_CANDIDATES, passages cut to RERANK_MAX_TOKENS. Measured on CISI (docs/adr/0046):
     * only a light share held (weight 0.3 over the top 10); replacing the order lost 0.011–0.072.
     */
    RERANK_FUSION_K: z.coerce.number().int().min(1).default(60),
    RERANK_FUSION_WEIGHT: z.coerce.number().min(0).max(1).default(0.3),
    RERANK_MAX_TOKENS: z.coerce.number().int().min(32).max(512).default(256),
    /** document-service's REST API, which GetDocument and ListDocuments read. */
    DOCUMENT_SERVICE_URL: z.url().default('http://127.0.0.1:3001'),
    /**
     * How long a search's hit details (a caller's answer from document-service for a document)
     * are served again to the same token, unless a document, status or ACL event drops them
     * first (docs/adr/0045). 0: every search asks document-service.
     */
    HIT_DETAILS_CACHE_MS: z.coerce.number().int().min(0).default(30_000),
    /**
     * An OpenAI-compatible chat-completions server (base URL, e.g. `https://host/v1`) that
     * rewrites follow-up questions of `/v1/context` into standalone queries. Unset: the
     * deterministic rule does (docs/adr/0022). QUERY_REWRITE_MODEL is then required.
     */
    QUERY_REWRITE_API_URL: z.url().optional(),
    QUERY_REWRITE_API_KEY: z.string().min(1).optional(),
    QUERY_REWRITE_MODEL: z.string().min(1).optional(),
    QUERY_REWRITE_TIMEOUT_MS: env.positiveInt(5000),
  })
  .superRefine(requireEmbeddingProviderSettings)
  .superRefine((config, ctx) => {
    if (config.QUERY_REWRITE_API_URL && !config.QUERY_REWRITE_MODEL) {
      ctx.addIssue({
        code: 'custom',
        path: ['QUERY_REWRITE_MODEL'],
        message: 'required when QUERY_REWRITE_API_URL is set',
      });
    }
  });

export type QueryConfig = z.infer<typeof queryConfigSchema>;
export const QUERY_CONFIG = Symbol('QUERY_CONFIG');
export const loadQueryConfig = (): QueryConfig => loadConfig(queryConfigSchema);
