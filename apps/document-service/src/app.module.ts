import { AccessResolver, ResolverAccessPolicy, type TokenVerifier } from '@kb/auth';
import { migrationsReadinessCheck } from '@kb/database';
import {
  ACCESS_POLICY,
  type Closer,
  CLOSERS,
  type FlexibleRateLimiter,
  HealthController,
  MetricsController,
  RATE_LIMITER,
  Readiness,
  READINESS_CHECKS,
  ResourceCloser,
  TOKEN_VERIFIER,
} from '@kb/http';
import type { IndexGenerations } from '@kb/index-state';
import {
  EVENT_CONSUMERS,
  type EventConsumer,
  EventConsumersHost,
  type EventProducer,
} from '@kb/kafka';
import { type S3BlobStore, s3BlobStoreFromEnv } from '@kb/storage';
import { type DynamicModule, Module } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import type { Kafka } from 'kafkajs';
import { type Kysely, sql } from 'kysely';

import { AccessInvalidationConsumer } from './access/access-invalidation.consumer';
import { CollectionsController } from './collections/collections.controller';
import { CollectionsService } from './collections/collections.service';
import { DOCUMENT_CONFIG, type DocumentConfig } from './config/document.config';
import { DocumentContentController } from './document-content/document-content.controller';
import { DocumentContentService } from './document-content/document-content.service';
import { DocumentAudit } from './documents/document-audit';
import { DocumentMembershipService } from './documents/document-membership.service';
import { DocumentReads } from './documents/document-reads.service';
import { DocumentStatusConsumer } from './documents/document-status.consumer';
import { DocumentsController } from './documents/documents.controller';
import { DocumentsRepository } from './documents/documents.repository';
import { DocumentsService } from './documents/documents.service';
import { SqlDocumentsRepository } from './documents/documents-sql.repository';
import { KnowledgeBaseDocumentsController } from './documents/knowledge-base-documents.controller';
import { PrecomputedChunksController } from './documents/precomputed-chunks.controller';
import { PrecomputedChunksService } from './documents/precomputed-chunks.service';
import { uploadOptions } from './documents/upload.options';
import { KnowledgeBaseDirectoryService } from './knowledge-bases/knowledge-base-directory.service';
import { KnowledgeBasesController } from './knowledge-bases/knowledge-bases.controller';
import { KnowledgeBasesRepository } from './knowledge-bases/knowledge-bases.repository';
import { KnowledgeBasesService } from './knowledge-bases/knowledge-bases.service';
import { SqlKnowledgeBasesRepository } from './knowledge-bases/knowledge-bases-sql.repository';
import { EmbeddingServiceCatalog, MODEL_CATALOG } from './knowledge-bases/model-catalog.client';
import { migrationPlans } from './migrations';
import { OpenApiController } from './openapi.controller';
import { OutboxRelay } from './outbox/outbox.relay';
import { OutboxRepository, SqlOutboxRepository } from './outbox/outbox.repository';
import { OutboxWriter } from './outbox/outbox.writer';
import { KnowledgeBaseDirectory } from './pipelines/knowledge-base-directory.port';
import { pipelineDefaultsProvider } from './pipelines/pipeline-defaults.provider';
import { TagRuleMembership } from './pipelines/tag-rule-membership.port';
import type { DocumentDatabase } from './platform/db.types';
import { BLOB_STORE, CLOCK, DB, EVENT_PRODUCER, GENERATIONS, KAFKA } from './platform/tokens';
import { SqlTransactionRunner, TransactionRunner } from './platform/transaction.runner';
import { AccessReconciler } from './reconciliation/access.reconciler';
import { Reconciler } from './reconciliation/reconciler.service';
import { ReconciliationRepository } from './reconciliation/reconciliation.repository';
import { SOURCE_STORES, type SourceStores, SourceSyncService } from './sources/source-sync.service';
import { SourcesController } from './sources/sources.controller';
import { SourcesRepository } from './sources/sources.repository';
import { SourcesService } from './sources/sources.service';
import { DocumentStatsController } from './stats/document-stats.controller';
import { DocumentStatsRepository } from './stats/document-stats.repository';
import { DocumentStatsService } from './stats/document-stats.service';
import { SqlDocumentStatsRepository } from './stats/document-stats-sql.repository';

/** The adapters main.ts builds (and connects) from validated config; closed at shutdown. */
export interface DocumentDeps {
  config: DocumentConfig;
  db: Kysely<DocumentDatabase>;
  kafka: Kafka;
  producer: EventProducer;
  blobs: S3BlobStore;
  verifier: TokenVerifier;
  /** Bumped when documents are deleted in bulk, so no cached search result shows them. */
  generations: Pick<IndexGenerations, 'bump'> & { close?: () => Promise<void> };
  /** Upload and knowledge-base budgets (@Authenticated({ rateLimit })). */
  rateLimiter: FlexibleRateLimiter;
}

@Module({})
export class AppModule {
  static register(deps: DocumentDeps): DynamicModule {
    const { config } = deps;
    // After the consumers, the relay and the reconciler have stopped (beforeApplicationShutdown):
    // the producer flushes what the last handlers sent, then the stores close.
    const closers: Closer[] = [
      () => deps.producer.disconnect(),
      () => deps.blobs.destroy(),
      () => deps.db.destroy(),
      () => deps.rateLimiter.close(),
      async () => deps.generations.close?.(),
    ];
    return {
      module: AppModule,
      imports: [MulterModule.register(uploadOptions(config))],
      controllers: [
        DocumentsController,
        CollectionsController,
        KnowledgeBasesController,
        KnowledgeBaseDocumentsController,
        PrecomputedChunksController,
        SourcesController,
        DocumentContentController,
        DocumentStatsController,
        OpenApiController,
        HealthController,
        MetricsController,
      ],
      providers: [
        { provide: DOCUMENT_CONFIG, useValue: config },
        { provide: DB, useValue: deps.db },
        { provide: KAFKA, useValue: deps.kafka },
        { provide: EVENT_PRODUCER, useValue: deps.producer },
        { provide: BLOB_STORE, useValue: deps.blobs },
        { provide: CLOCK, useValue: () => new Date() },
        { provide: GENERATIONS, useValue: deps.generations },
        { provide: CLOSERS, useValue: closers },
        { provide: RATE_LIMITER, useValue: deps.rateLimiter },
        ResourceCloser,
        { provide: TOKEN_VERIFIER, useValue: deps.verifier },
        {
          provide: AccessResolver,
          useFactory: () =>
            new AccessResolver({
              address: config.ACL_GRPC_ADDRESS,
              ttlMs: config.AUTHZ_CACHE_TTL_MS,
            }),
        },
        {
          provide: ACCESS_POLICY,
          inject: [AccessResolver],
          useFactory: (resolver: AccessResolver) => new ResolverAccessPolicy(resolver),
        },
        pipelineDefaultsProvider,
        { provide: TransactionRunner, useClass: SqlTransactionRunner },
        { provide: OutboxRepository, useClass: SqlOutboxRepository },
        OutboxWriter,
        OutboxRelay,
        { provide: DocumentsRepository, useClass: SqlDocumentsRepository },
        { provide: KnowledgeBasesRepository, useClass: SqlKnowledgeBasesRepository },
        // documents/ and knowledge-bases/ reach each other through these two ports only.
        { provide: KnowledgeBaseDirectory, useClass: KnowledgeBaseDirectoryService },
        { provide: TagRuleMembership, useExisting: DocumentMembershipService },
        DocumentMembershipService,
        DocumentAudit,
        DocumentsService,
        PrecomputedChunksService,
        SourcesRepository,
        SourcesService,
        SourceSyncService,
        {
          provide: SOURCE_STORES,
          useValue: ((bucket: string) =>
            s3BlobStoreFromEnv({ ...config, S3_BUCKET: bucket })) satisfies SourceStores,
        },
        DocumentContentService,
        { provide: DocumentStatsRepository, useClass: SqlDocumentStatsRepository },
        DocumentStatsService,
        DocumentReads,
        KnowledgeBasesService,
        CollectionsService,
        { provide: MODEL_CATALOG, useClass: EmbeddingServiceCatalog },
        ReconciliationRepository,
        Reconciler,
        AccessReconciler,
        AccessInvalidationConsumer,
        DocumentStatusConsumer,
        {
          provide: EVENT_CONSUMERS,
          inject: [AccessInvalidationConsumer, DocumentStatusConsumer],
          useFactory: (...consumers: Array<{ consumer: EventConsumer }>) =>
            consumers.map(({ consumer }) => consumer),
        },
        EventConsumersHost,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [EventConsumersHost],
          useFactory: (consumers: EventConsumersHost) => [
            { name: 'postgres', check: async () => (await sql`select 1`.execute(deps.db), true) },
            // Not ready while the Helm hook (or a newer replica) has migrations left to apply.
            migrationsReadinessCheck(migrationPlans(config)),
            consumers.readinessCheck(),
            // Uploads store originals in S3: while it is away they answer 503.
            { name: 's3', check: async () => (await deps.blobs.ping(), true) },
          ],
        },
      ],
    };
  }
}
