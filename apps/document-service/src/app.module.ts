import { AccessResolver } from '@kb/auth';
import { migrationsReadinessCheck } from '@kb/database';
import { HealthController, MetricsController, READINESS_CHECKS, Readiness } from '@kb/http';
import { EVENT_CONSUMERS, EventConsumersHost, type EventConsumer } from '@kb/kafka';
import { Module, type DynamicModule } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import { sql, type Kysely } from 'kysely';
import { diskStorage } from 'multer';
import { AccessInvalidationConsumer } from './access/access-invalidation.consumer';
import { DOCUMENT_CONFIG, type DocumentConfig } from './config/document.config';
import { DocumentMembershipService } from './documents/document-membership.service';
import { DocumentStatusConsumer } from './documents/document-status.consumer';
import { SqlDocumentsRepository } from './documents/documents-sql.repository';
import { DocumentsController } from './documents/documents.controller';
import { DocumentsRepository } from './documents/documents.repository';
import { DocumentsService } from './documents/documents.service';
import { KnowledgeBaseDocumentsController } from './documents/knowledge-base-documents.controller';
import { KnowledgeBaseDirectoryService } from './knowledge-bases/knowledge-base-directory.service';
import { SqlKnowledgeBasesRepository } from './knowledge-bases/knowledge-bases-sql.repository';
import { KnowledgeBasesController } from './knowledge-bases/knowledge-bases.controller';
import { KnowledgeBasesRepository } from './knowledge-bases/knowledge-bases.repository';
import { KnowledgeBasesService } from './knowledge-bases/knowledge-bases.service';
import { EmbeddingServiceCatalog, MODEL_CATALOG } from './knowledge-bases/model-catalog';
import { migrationPlans } from './migrations';
import { OutboxRelay } from './outbox/outbox.relay';
import { OutboxRepository, SqlOutboxRepository } from './outbox/outbox.repository';
import { OutboxWriter } from './outbox/outbox.writer';
import { KnowledgeBaseDirectory } from './pipelines/knowledge-base-directory.port';
import { pipelineDefaultsProvider } from './pipelines/pipeline-defaults.provider';
import { TagRuleMembership } from './pipelines/tag-rule-membership.port';
import type { DocumentDatabase } from './platform/db.types';
import { PlatformModule } from './platform/platform.module';
import { DB } from './platform/tokens';
import { SqlTransactionRunner, TransactionRunner } from './platform/transaction.runner';
import { ReconciliationRepository } from './reconciliation/reconciliation.repository';
import { Reconciler } from './reconciliation/reconciler.service';

@Module({})
export class AppModule {
  static register(config: DocumentConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        {
          module: class ConfigModule {},
          global: true,
          providers: [{ provide: DOCUMENT_CONFIG, useValue: config }],
          exports: [DOCUMENT_CONFIG],
        },
        PlatformModule,
        // Uploads stream to a temporary file (memory stays flat whatever the size); larger ones
        // are refused with 413 and their partial file removed before anything is stored.
        MulterModule.register({
          storage: diskStorage({ destination: config.UPLOAD_TMP_DIR }),
          limits: { fileSize: config.MAX_UPLOAD_BYTES, files: 1 },
        }),
      ],
      controllers: [
        DocumentsController,
        KnowledgeBasesController,
        KnowledgeBaseDocumentsController,
        HealthController,
        MetricsController,
      ],
      providers: [
        {
          provide: AccessResolver,
          useFactory: () =>
            new AccessResolver({
              address: config.ACL_GRPC_ADDRESS,
              ttlMs: config.AUTHZ_CACHE_TTL_MS,
            }),
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
        DocumentsService,
        KnowledgeBasesService,
        { provide: MODEL_CATALOG, useClass: EmbeddingServiceCatalog },
        ReconciliationRepository,
        Reconciler,
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
          inject: [DB, EventConsumersHost],
          useFactory: (db: Kysely<DocumentDatabase>, consumers: EventConsumersHost) => [
            { name: 'postgres', check: async () => (await sql`select 1`.execute(db), true) },
            // Not ready while the Helm hook (or a newer replica) has migrations left to apply.
            migrationsReadinessCheck(migrationPlans(config)),
            { name: 'kafka-consumer', check: async () => consumers.allJoined },
          ],
        },
      ],
    };
  }
}
