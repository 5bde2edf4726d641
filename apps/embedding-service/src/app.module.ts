import type { EmbeddingProvider } from '@kb/embeddings';
import {
  CLOSERS,
  HealthController,
  MetricsController,
  READINESS_CHECKS,
  Readiness,
  ResourceCloser,
  type Closer,
} from '@kb/http';
import {
  EVENT_CONSUMERS,
  EventConsumer,
  EventConsumersHost,
  consumerLog,
  markFailedOnDeadLetter,
  type EventProducer,
} from '@kb/kafka';
import { Topics } from '@kb/contracts';
import type { S3BlobStore } from '@kb/storage';
import { Module, type DynamicModule } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { CachedEmbedder, type PgEmbeddingCache } from './cache/embedding-cache';
import { EMBEDDING_CONFIG, type EmbeddingServiceConfig } from './config/embedding.config';
import { EmbeddingService } from './embedding/embedding.service';
import { ModelsController } from './embedding/models.controller';
import { BLOB_STORE, EMBEDDER, EMBEDDING_PROVIDER, EVENT_PRODUCER, KAFKA } from './platform/tokens';

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
    ];
    return {
      module: AppModule,
      controllers: [HealthController, MetricsController, ModelsController],
      providers: [
        { provide: EMBEDDING_CONFIG, useValue: deps.config },
        { provide: KAFKA, useValue: deps.kafka },
        { provide: EVENT_PRODUCER, useValue: deps.producer },
        { provide: BLOB_STORE, useValue: deps.blobs },
        { provide: EMBEDDING_PROVIDER, useValue: deps.provider },
        {
          provide: EMBEDDER,
          useValue: embeddersByModel(deps),
        },
        { provide: CLOSERS, useValue: closers },
        ResourceCloser,
        EmbeddingService,
        {
          // Thin Kafka adapter: `document parsed` events in, one service call each.
          provide: EVENT_CONSUMERS,
          inject: [EmbeddingService],
          useFactory: (embedding: EmbeddingService) => [
            new EventConsumer(deps.kafka, {
              groupId: deps.config.KAFKA_GROUP_ID,
              handlers: {
                [Topics.documentParsed]: (event) =>
                  embedding.embedDocument(event.tenantId, event.payload),
              },
              onDeadLetter: markFailedOnDeadLetter(deps.producer, 'embedding_error'),
              log: consumerLog('ParsedConsumer'),
            }),
          ],
        },
        EventConsumersHost,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [EventConsumersHost],
          useFactory: (consumers: EventConsumersHost) => [
            { name: 'kafka-consumer', check: async () => consumers.allJoined },
            { name: 's3', check: async () => (await deps.blobs.ping(), true) },
          ],
        },
      ],
    };
  }
}
