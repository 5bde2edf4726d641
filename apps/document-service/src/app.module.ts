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
import { EVENT_CONSUMERS, type EventConsumer, EventConsumersHost } from '@kb/kafka';
import { s3BlobStoreFromEnv } from '@kb/storage';
import { type DynamicModule, Module } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import { sql } from 'kysely';

import { AccessInvalidationConsumer } from './access/access-invalidation.consumer';
import { DocumentContentController } from './document-content/document-content.controller';
import { DocumentContentService } from './document-content/document-content.service';
import { DocumentStatusConsumer } from './documents/document-status.consumer';
import { DocumentsController } from './documents/documents.controller';
import { DocumentsModule } from './documents/documents.module';
import { uploadOptions } from './documents/upload.options';
import { ErasuresController } from './erasures/erasures.controller';
import { ErasuresRepository } from './erasures/erasures.repository';
import { ErasuresService } from './erasures/erasures.service';
import { EndedGrantsRepository } from './grants/ended-grants.repository';
import { GrantExpiryScheduler } from './grants/grant-expiry.scheduler';
import { GrantExpiryService } from './grants/grant-expiry.service';
import { LegalHoldsController } from './holds/legal-holds.controller';
import { LegalHoldsService } from './holds/legal-holds.service';
import { KnowledgeBasesModule } from './knowledge-bases/knowledge-bases.module';
import { migrationPlans } from './migrations';
import { OpenApiController } from './openapi.controller';
import { type DocumentDeps, PlatformModule } from './platform/platform.module';
import { AccessReconciler } from './reconciliation/access.reconciler';
import { PipelineBacklog } from './reconciliation/pipeline-backlog';
import { Reconciler } from './reconciliation/reconciler.service';
import { ReconciliationRepository } from './reconciliation/reconciliation.repository';
import { RepairController } from './repair/repair.controller';
import { RepairRepository } from './repair/repair.repository';
import { RepairService } from './repair/repair.service';
import { BulkDeletion } from './retention/bulk-deletion';
import { RetentionController } from './retention/retention.controller';
import { RetentionRepository } from './retention/retention.repository';
import { RetentionScheduler } from './retention/retention.scheduler';
import { RetentionService } from './retention/retention.service';
import { SourceScheduler } from './sources/source.scheduler';
import { SOURCE_STORES, type SourceStores, SourceSyncService } from './sources/source-sync.service';
import { SourcesController } from './sources/sources.controller';
import { SourcesRepository } from './sources/sources.repository';
import { SourcesService } from './sources/sources.service';
import { DocumentStatsController } from './stats/document-stats.controller';
import { DocumentStatsService } from './stats/document-stats.service';
import { UsageConsumer } from './usage/usage.consumer';
import { UsageModule } from './usage/usage.module';

export type { DocumentDeps };

/**
 * The root: the deps bag (PlatformModule), the documents and knowledge-bases feature modules,
 * and the smaller domains (sources, content, stats, reconciliation) with the consumers, readiness
 * and shutdown.
 */
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
      imports: [
        PlatformModule.register(deps),
        // Uploads spool to disk (UPLOAD_TMP_DIR) with the size limit, for DocumentsController.
        MulterModule.register(uploadOptions(config)),
        UsageModule,
        DocumentsModule,
        KnowledgeBasesModule,
      ],
      controllers: [
        DocumentsController,
        SourcesController,
        DocumentContentController,
        DocumentStatsController,
        RepairController,
        LegalHoldsController,
        RetentionController,
        ErasuresController,
        OpenApiController,
        HealthController,
        MetricsController,
      ],
      providers: [
        { provide: CLOSERS, useValue: closers },
        ResourceCloser,
        SourcesRepository,
        SourcesService,
        SourceSyncService,
        SourceScheduler,
        {
          provide: SOURCE_STORES,
          useValue: ((bucket: string) =>
            s3BlobStoreFromEnv({ ...config, S3_BUCKET: bucket })) satisfies SourceStores,
        },
        DocumentContentService,
        DocumentStatsService,
        ReconciliationRepository,
        Reconciler,
        AccessReconciler,
        PipelineBacklog,
        RepairRepository,
        RepairService,
        LegalHoldsService,
        BulkDeletion,
        RetentionRepository,
        ErasuresRepository,
        ErasuresService,
        RetentionService,
        RetentionScheduler,
        EndedGrantsRepository,
        GrantExpiryService,
        GrantExpiryScheduler,
        AccessInvalidationConsumer,
        {
          provide: EVENT_CONSUMERS,
          inject: [AccessInvalidationConsumer, DocumentStatusConsumer, UsageConsumer],
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
