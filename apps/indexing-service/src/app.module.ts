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
import type { LexicalIndex, PgIndexGenerations } from '@kb/lexical-index';
import type { VectorStore } from '@kb/vector-store';
import { Module, type DynamicModule } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { INDEXING_CONFIG, type IndexingConfig } from './config/indexing.config';
import { EmbeddedConsumer } from './indexing/embedded.consumer';
import { IndexingService } from './indexing/indexing.service';
import {
  BLOB_STORE,
  EVENT_PRODUCER,
  GENERATIONS,
  KAFKA,
  LEXICAL_INDEX,
  VECTOR_STORE,
} from './platform/tokens';

export interface IndexingDeps {
  config: IndexingConfig;
  kafka: Kafka;
  producer: EventProducer;
  blobs: S3BlobStore;
  vectors: VectorStore;
  lexical: LexicalIndex;
  generations: PgIndexGenerations;
}

@Module({})
export class AppModule {
  static register(deps: IndexingDeps): DynamicModule {
    const closers: Closer[] = [
      () => deps.producer.disconnect(),
      () => deps.blobs.destroy(),
      () => deps.vectors.close(),
      () => deps.lexical.close(),
      () => deps.generations.close(),
    ];
    return {
      module: AppModule,
      controllers: [HealthController],
      providers: [
        { provide: INDEXING_CONFIG, useValue: deps.config },
        { provide: KAFKA, useValue: deps.kafka },
        { provide: EVENT_PRODUCER, useValue: deps.producer },
        { provide: BLOB_STORE, useValue: deps.blobs },
        { provide: VECTOR_STORE, useValue: deps.vectors },
        { provide: LEXICAL_INDEX, useValue: deps.lexical },
        { provide: GENERATIONS, useValue: deps.generations },
        { provide: CLOSERS, useValue: closers },
        ResourceCloser,
        IndexingService,
        EmbeddedConsumer,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [EmbeddedConsumer],
          useFactory: (embedded: EmbeddedConsumer) => [
            { name: 'kafka-consumer', check: async () => embedded.consumer.isJoined },
          ],
        },
      ],
    };
  }
}
