import { AccessResolver, ResolverAccessPolicy, type TokenVerifier } from '@kb/auth';
import type { EmbeddingProvider } from '@kb/embeddings';
import { GrpcTransport } from '@kb/grpc';
import {
  ACCESS_POLICY,
  type Closer,
  CLOSERS,
  type FlexibleRateLimiter,
  HealthController,
  MetricsController,
  MODEL_API_QUEUE,
  ModelRunQueue,
  RATE_LIMITER,
  Readiness,
  READINESS_CHECKS,
  ResourceCloser,
} from '@kb/http';
import {
  CoalescingGenerationReads,
  type PgDocumentIndexState,
  type PgIndexGenerations,
} from '@kb/index-state';
import {
  EVENT_CONSUMERS,
  type EventConsumer,
  EventConsumersHost,
  type EventProducer,
} from '@kb/kafka';
import type { LexicalIndex } from '@kb/lexical-index';
import type { VectorStore } from '@kb/vector-store';
import { type DynamicModule, Module } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { AccessCacheConsumer } from './access/access-cache.consumer';
import { SearchAudit } from './audit/search-audit.publisher';
import type { SearchCache } from './cache/search.cache';
import { QUERY_CONFIG, type QueryConfig } from './config/query.config';
import { ChatModelRewriter } from './context/chat-model.rewriter';
import { ContextController } from './context/context.controller';
import { ContextGrpcController } from './context/context.grpc';
import { ContextService } from './context/context.service';
import { ContextRerankDefaults } from './context/context-rerank.defaults';
import { CHAT_REWRITER, ConversationRewriter } from './context/conversation.rewriter';
import { DocumentDetailsCache } from './documents/document-details.cache';
import { DocumentDetailsConsumer } from './documents/document-details.consumer';
import { DocumentsClient } from './documents/documents.client';
import { DocumentsGrpcController } from './documents/documents.grpc';
import { KnowledgeBaseToolsAdapter } from './mcp/knowledge-base-tools.adapter';
import { McpController } from './mcp/mcp.controller';
import { ModelsController } from './models/models.controller';
import { OpenApiController } from './openapi.controller';
import {
  EVENT_PRODUCER,
  GENERATIONS,
  INDEX_STATE,
  KAFKA,
  LEXICAL_INDEX,
  RERANKER,
  SEARCH_CACHE,
  SEARCH_TUNING,
  TOKEN_VERIFIER,
  VECTOR_STORE,
} from './platform/tokens';
import { RerankController } from './rerank/rerank.controller';
import { RerankService } from './rerank/rerank.service';
import { crossEncoderStateOf, type Reranker } from './search/cross-encoder.reranker';
import { HybridRetrieval } from './search/hybrid.retrieval';
import { lexicalWarmCheck, LexicalWarmStart } from './search/lexical-warm-start';
import { QueryEmbedder } from './search/query.embedder';
import { SearchController } from './search/search.controller';
import { SearchGrpcController } from './search/search.grpc';
import { SearchService } from './search/search.service';
import { knowledgeBaseService } from './search/search.wire';
import { SearchQuota } from './search/search-quota';
import { SearchResultCache } from './search/search-result.cache';
import { SimilarService } from './search/similar.service';
import { DiversifyStep } from './search/steps/diversify.step';
import { HitDetailsStep } from './search/steps/hit-details.step';
import { NeighborsStep } from './search/steps/neighbors.step';
import { RerankStep } from './search/steps/rerank.step';

export interface QueryDeps {
  config: QueryConfig;
  provider: EmbeddingProvider;
  vectors: VectorStore;
  lexical: LexicalIndex;
  generations: PgIndexGenerations;
  /** Read for the index spaces of knowledge bases. */
  indexState: PgDocumentIndexState;
  cache: SearchCache | null;
  /** The cross-encoder, when a model is installed. */
  reranker?: Reranker | null;
  /** Models served beside `provider` (EMBEDDING_EXTRA_MODELS): knowledge bases may name them. */
  extraProviders?: EmbeddingProvider[];
  kafka: Kafka;
  producer: EventProducer;
  verifier: TokenVerifier;
  /** Search budgets (@Authenticated({ rateLimit: 'search' })). */
  rateLimiter: FlexibleRateLimiter;
}

@Module({})
export class AppModule {
  static register(deps: QueryDeps): DynamicModule {
    const closers: Closer[] = [
      () => deps.vectors.close(),
      () => deps.lexical.close(),
      () => deps.generations.close(),
      () => deps.indexState.close(),
      async () => deps.cache?.close(),
      async () => deps.reranker?.close(),
      async () => deps.provider.close?.(),
      () => deps.producer.disconnect(),
      () => deps.rateLimiter.close(),
    ];
    return {
      module: AppModule,
      controllers: [
        SearchController,
        ContextController,
        SearchGrpcController,
        ContextGrpcController,
        DocumentsGrpcController,
        McpController,
        RerankController,
        ModelsController,
        OpenApiController,
        HealthController,
        MetricsController,
      ],
      providers: [
        { provide: QUERY_CONFIG, useValue: deps.config },
        { provide: VECTOR_STORE, useValue: deps.vectors },
        { provide: LEXICAL_INDEX, useValue: deps.lexical },
        // One generation read per tenant on its way at a time, shared by the searches that
        // arrive meanwhile (docs/adr/0029).
        { provide: GENERATIONS, useValue: new CoalescingGenerationReads(deps.generations) },
        { provide: INDEX_STATE, useValue: deps.indexState },
        { provide: SEARCH_CACHE, useValue: deps.cache },
        {
          provide: SEARCH_TUNING,
          useValue: {
            semanticWeight: deps.config.HYBRID_SEMANTIC_WEIGHT,
            feedback: deps.config.PSEUDO_RELEVANCE_FEEDBACK,
            timeoutMs: deps.config.SEARCH_TIMEOUT_MS,
            rerankCandidates: deps.config.RERANK_CANDIDATES,
            rerankBudgetMs: deps.config.RERANK_BUDGET_MS,
            rerankMaxTokens: deps.config.RERANK_MAX_TOKENS,
            rerankFusion: {
              k: deps.config.RERANK_FUSION_K,
              weight: deps.config.RERANK_FUSION_WEIGHT,
            },
          },
        },
        { provide: RERANKER, useValue: deps.reranker ?? null },
        LexicalWarmStart,
        {
          provide: QueryEmbedder,
          inject: [SEARCH_CACHE],
          useFactory: (cache: SearchCache | null) =>
            new QueryEmbedder(
              {
                main: deps.provider,
                mainName: deps.config.EMBEDDING_MODEL,
                extra: deps.extraProviders ?? [],
              },
              cache,
            ),
        },
        { provide: CLOSERS, useValue: closers },
        { provide: EVENT_PRODUCER, useValue: deps.producer },
        { provide: TOKEN_VERIFIER, useValue: deps.verifier },
        { provide: RATE_LIMITER, useValue: deps.rateLimiter },
        {
          provide: MODEL_API_QUEUE,
          useValue: new ModelRunQueue({
            name: 'rerank',
            concurrency: deps.config.MODEL_API_CONCURRENCY,
            maxWaiting: deps.config.MODEL_API_MAX_QUEUE,
          }),
        },
        {
          provide: AccessResolver,
          useFactory: () =>
            new AccessResolver({
              address: deps.config.ACL_GRPC_ADDRESS,
              ttlMs: deps.config.AUTHZ_CACHE_TTL_MS,
            }),
        },
        {
          provide: ACCESS_POLICY,
          inject: [AccessResolver],
          useFactory: (resolver: AccessResolver) => new ResolverAccessPolicy(resolver),
        },
        SearchAudit,
        { provide: KAFKA, useValue: deps.kafka },
        AccessCacheConsumer,
        {
          provide: DocumentDetailsCache,
          inject: [QUERY_CONFIG],
          useFactory: (config: QueryConfig) =>
            new DocumentDetailsCache(config.HIT_DETAILS_CACHE_MS),
        },
        DocumentDetailsConsumer,
        {
          provide: EVENT_CONSUMERS,
          inject: [AccessCacheConsumer, DocumentDetailsConsumer],
          useFactory: (...consumers: Array<{ consumer: EventConsumer }>) =>
            consumers.map(({ consumer }) => consumer),
        },
        EventConsumersHost,
        ResourceCloser,
        SearchResultCache,
        HybridRetrieval,
        RerankStep,
        DiversifyStep,
        NeighborsStep,
        HitDetailsStep,
        SearchService,
        SearchQuota,
        SimilarService,
        RerankService,
        DocumentsClient,
        {
          provide: CHAT_REWRITER,
          useValue: chatRewriterOf(deps.config),
        },
        ConversationRewriter,
        ContextService,
        ContextRerankDefaults,
        KnowledgeBaseToolsAdapter,
        {
          provide: GrpcTransport,
          useValue: new GrpcTransport({
            host: deps.config.GRPC_HOST,
            port: deps.config.GRPC_PORT,
            services: { 'kb.v1.KnowledgeBase': knowledgeBaseService },
          }),
        },
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [GrpcTransport, LexicalWarmStart],
          useFactory: (grpc: GrpcTransport, warm: LexicalWarmStart) => [
            { name: 'grpc', check: async () => grpc.listening },
            // Not ready while it takes up what the last process held, within its time (ADR 62).
            lexicalWarmCheck(warm),
            // Ready while either index answers: with one down, searches degrade instead of failing.
            {
              name: 'search-backend',
              check: async () =>
                (await Promise.allSettled([deps.vectors.ping(), deps.lexical.ping()])).some(
                  (r) => r.status === 'fulfilled',
                ),
            },
            // The cache fails open: without Redis searches answer from the indexes (degraded).
            ...(deps.cache
              ? [{ name: 'redis', critical: false, check: async () => deps.cache!.isReady }]
              : []),
            // Never unready (a configured model that fails to load stops the boot): it describes.
            {
              name: 'cross_encoder',
              check: async () => true,
              details: () => crossEncoderStateOf(deps.reranker ?? null),
            },
          ],
        },
      ],
    };
  }
}

/** The follow-up rewriting model, when QUERY_REWRITE_API_URL names one. */
function chatRewriterOf(config: QueryConfig): ChatModelRewriter | null {
  if (!config.QUERY_REWRITE_API_URL || !config.QUERY_REWRITE_MODEL) return null;
  return new ChatModelRewriter({
    url: config.QUERY_REWRITE_API_URL,
    apiKey: config.QUERY_REWRITE_API_KEY,
    model: config.QUERY_REWRITE_MODEL,
    timeoutMs: config.QUERY_REWRITE_TIMEOUT_MS,
  });
}
