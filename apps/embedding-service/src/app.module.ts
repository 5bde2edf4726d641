import type { EmbeddingProvider } from '@kb/embeddings';
import {
  CLOSERS,
  HealthController,
  READINESS_CHECKS,
  Readiness,
  ResourceCloser,
  type Closer,
} from '@kb/http';
import type { EventProducer } from '@kb/kafka';
import type { S3BlobStore } from '@kb/storage';
import { Module, type DynamicModule } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { EMBEDDING_CONFIG, type EmbeddingServiceConfig } from './config/embedding.config';
import { EmbeddingService } from './embedding/embedding.service';
import { ParsedConsumer } from './embedding/parsed.consumer';
import { BLOB_STORE, EMBEDDING_PROVIDER, EVENT_PRODUCER, KAFKA } from './platform/tokens';

export interface EmbeddingDeps {
  config: EmbeddingServiceConfig;
  kafka: Kafka;
  producer: EventProducer;
  blobs: S3BlobStore;
  provider: EmbeddingProvider;
}

@Module({})
export class AppModule {
  static register(deps: EmbeddingDeps): DynamicModule {
    const closers: Closer[] = [
      () => deps.producer.disconnect(),
      () => deps.blobs.destroy(),
      async () => deps.provider.close?.(),
    ];
    return {
      module: AppModule,
      controllers: [HealthController],
      providers: [
        { provide: EMBEDDING_CONFIG, useValue: deps.config },
        { provide: KAFKA, useValue: deps.kafka },
        { provide: EVENT_PRODUCER, useValue: deps.producer },
        { provide: BLOB_STORE, useValue: deps.blobs },
        { provide: EMBEDDING_PROVIDER, useValue: deps.provider },
        { provide: CLOSERS, useValue: closers },
        ResourceCloser,
        EmbeddingService,
        ParsedConsumer,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [ParsedConsumer],
          useFactory: (parsed: ParsedConsumer) => [
            { name: 'kafka-consumer', check: async () => parsed.consumer.isJoined },
          ],
        },
      ],
    };
  }
}
