import { migrationsReadinessCheck } from '@kb/database';
import {
  type Closer,
  CLOSERS,
  HealthController,
  MetricsController,
  Readiness,
  READINESS_CHECKS,
  ResourceCloser,
} from '@kb/http';
import type { PgDocumentIndexState, SettlingIndexGenerations } from '@kb/index-state';
import { EVENT_CONSUMERS, EventConsumersHost, type EventProducer } from '@kb/kafka';
import type { LexicalIndex } from '@kb/lexical-index';
import type { S3BlobStore } from '@kb/storage';
import type { VectorStore } from '@kb/vector-store';
import { type DynamicModule, Module } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { INDEXING_CONFIG, type IndexingConfig } from './config/indexing.config';
import { AccessReconciliationService } from './indexing/access-reconciliation.service';
import { IndexingConsumer } from './indexing/indexing.consumer';
import { IndexingService } from './indexing/indexing.service';
import { OrphanSweeper } from './indexing/orphan.sweeper';
import { migrationPlans } from './migrations';
import {
  BLOB_STORE,
  EVENT_PRODUCER,
  GENERATIONS,
  INDEX_STATE,
  KAFKA,
  LEXICAL_INDEX,
  SEARCH_CACHE_PURGER,
  VECTOR_STORE,
} from './platform/tokens';
import { DerivedCleanupTask } from './removal/derived-cleanup.task';
import { DocumentRemovalService } from './removal/document-removal.service';
import type { SearchCachePurger } from './removal/search-cache.purger';

export interface IndexingDeps {
  config: IndexingConfig;
  kafka: Kafka;
  producer: EventProducer;
  blobs: S3BlobStore;
  vectors: VectorStore;
  lexical: LexicalIndex;
  /** Bumped again once an eventually consistent store has settled (review M8). */
  generations: SettlingIndexGenerations;
  indexState: PgDocumentIndexState;
  searchCache: SearchCachePurger;
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
      () => deps.indexState.close(),
      () => deps.searchCache.close(),
    ];
    return {
      module: AppModule,
      controllers: [HealthController, MetricsController],
      providers: [
        { provide: INDEXING_CONFIG, useValue: deps.config },
        { provide: KAFKA, useValue: deps.kafka },
        { provide: EVENT_PRODUCER, useValue: deps.producer },
        { provide: BLOB_STORE, useValue: deps.blobs },
        { provide: VECTOR_STORE, useValue: deps.vectors },
        { provide: LEXICAL_INDEX, useValue: deps.lexical },
        { provide: GENERATIONS, useValue: deps.generations },
        { provide: INDEX_STATE, useValue: deps.indexState },
        { provide: SEARCH_CACHE_PURGER, useValue: deps.searchCache },
        { provide: CLOSERS, useValue: closers },
        ResourceCloser,
        DocumentRemovalService,
        DerivedCleanupTask,
        IndexingService,
        AccessReconciliationService,
        OrphanSweeper,
        IndexingConsumer,
        {
          provide: EVENT_CONSUMERS,
          inject: [IndexingConsumer],
          useFactory: (indexing: IndexingConsumer) => [indexing.consumer],
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
            { name: 'vector-store', check: async () => (await deps.vectors.ping(), true) },
            { name: 'lexical-index', check: async () => (await deps.lexical.ping(), true) },
            { name: 's3', check: async () => (await deps.blobs.ping(), true) },
          ],
        },
      ],
    };
  }
}
