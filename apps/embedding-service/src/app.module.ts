import { AccessResolver, ResolverAccessPolicy, type TokenVerifier } from '@kb/auth';
import { migrationsReadinessCheck } from '@kb/database';
import type { EmbeddingProvider } from '@kb/embeddings';
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
  TOKEN_VERIFIER,
} from '@kb/http';
import { EVENT_CONSUMERS, EventConsumersHost, type EventProducer } from '@kb/kafka';
import type { S3BlobStore } from '@kb/storage';
import { type DynamicModule, Module } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { CachedEmbedder } from './cache/cached.embedder';
import type { PgEmbeddingCache } from './cache/embedding-cache.repository';
import { EMBEDDING_CONFIG, type EmbeddingServiceConfig } from './config/embedding.config';
import { EmbeddingService } from './embedding/embedding.service';
import { ModelsController } from './embedding/models.controller';
import { ParsedConsumer } from './embedding/parsed.consumer';
import { migrationPlans } from './migrations';
import { OpenAiController } from './openai/openai.controller';
import { OpenAiEmbeddingsService } from './openai/openai-embeddings.service';
import { OpenApiController } from './openai/openapi.controller';
import { BLOB_STORE, EMBEDDER, EVENT_PRODUCER, KAFKA } from './platform/tokens';

export interface EmbeddingDeps {
  config: EmbeddingServiceConfig;
  kafka: Kafka;
  producer: EventProducer;
  blobs: S3BlobStore;
  provider: EmbeddingProvider;
  /** Models served beside `provider` (EMBEDDING_EXTRA_MODELS). */
  extraProviders?: EmbeddingProvider[];
  /** The embedding cache, when DATABASE_URL is set. */
  cache: { store: PgEmbeddingCache; close: () => Promise<void> } | null;
  /** For POST /v1/embeddings' permission and rate limit (review N5). */
  verifier: TokenVerifier;
  rateLimiter: FlexibleRateLimiter;
}

/**
 * Every served model's embedder, by the name pipelines use: the main provider under its own name
 * and under EMBEDDING_MODEL (the name document-service gives the default pipeline, which for an
 * OpenAI-compatible API need not be the API's model id), then the extra models.
 */
function embeddersByModel(deps: EmbeddingDeps): Map<string, CachedEmbedder> {
  const cached = (provider: EmbeddingProvider) =>
    new CachedEmbedder(provider, deps.cache?.store ?? null, deps.config.EMBEDDING_BATCH_SIZE);
  const main = cached(deps.provider);
  return new Map([
    [deps.config.EMBEDDING_MODEL, main],
    [deps.provider.model, main],
    ...(deps.extraProviders ?? []).map((provider) => [provider.model, cached(provider)] as const),
  ]);
}

@Module({})
export class AppModule {
  static register(deps: EmbeddingDeps): DynamicModule {
    const closers: Closer[] = [
      () => deps.producer.disconnect(),
      () => deps.blobs.destroy(),
      async () => deps.provider.close?.(),
      async () => deps.cache?.close(),
      () => deps.rateLimiter.close(),
    ];
    return {
      module: AppModule,
      controllers: [
        HealthController,
        MetricsController,
        ModelsController,
        OpenAiController,
        OpenApiController,
      ],
      providers: [
        { provide: EMBEDDING_CONFIG, useValue: deps.config },
        { provide: KAFKA, useValue: deps.kafka },
        { provide: EVENT_PRODUCER, useValue: deps.producer },
        { provide: BLOB_STORE, useValue: deps.blobs },
        {
          provide: EMBEDDER,
          useValue: embeddersByModel(deps),
        },
        { provide: CLOSERS, useValue: closers },
        { provide: TOKEN_VERIFIER, useValue: deps.verifier },
        { provide: RATE_LIMITER, useValue: deps.rateLimiter },
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
        {
          // API calls' model runs, apart from the ingestion consumer's (review N5).
          provide: MODEL_API_QUEUE,
          useValue: new ModelRunQueue({
            name: 'embeddings',
            concurrency: deps.config.MODEL_API_CONCURRENCY,
            maxWaiting: deps.config.MODEL_API_MAX_QUEUE,
          }),
        },
        ResourceCloser,
        EmbeddingService,
        OpenAiEmbeddingsService,
        ParsedConsumer,
        {
          provide: EVENT_CONSUMERS,
          inject: [ParsedConsumer],
          useFactory: (parsed: ParsedConsumer) => [parsed.consumer],
        },
        EventConsumersHost,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [EventConsumersHost],
          useFactory: (consumers: EventConsumersHost) => [
            // Not ready while the Helm hook (or a newer replica) has migrations left to apply.
            migrationsReadinessCheck(migrationPlans(deps.config)),
            consumers.readinessCheck(),
            { name: 's3', check: async () => (await deps.blobs.ping(), true) },
          ],
        },
      ],
    };
  }
}
