import { AccessResolver } from '@kb/auth';
import { Topics, toTenantId } from '@kb/contracts';
import { HealthController, MetricsController, READINESS_CHECKS, Readiness } from '@kb/http';
import {
  EVENT_CONSUMERS,
  EventConsumer,
  EventConsumersHost,
  consumerLog,
  instanceGroupId,
} from '@kb/kafka';
import type { Kafka } from 'kafkajs';
import { pendingMigrations } from '@kb/database';
import { Module, type DynamicModule } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import { diskStorage } from 'multer';
import { sql, type Kysely } from 'kysely';
import { DOCUMENT_CONFIG, type DocumentConfig } from './config/document.config';
import { DocumentsController } from './documents/documents.controller';
import { KnowledgeBases } from './knowledge-bases/knowledge-bases';
import { EmbeddingServiceCatalog, MODEL_CATALOG } from './knowledge-bases/model-catalog';
import { KnowledgeBasesController } from './knowledge-bases/knowledge-bases.controller';
import { migrations } from './migrations';
import { DocumentsRepository } from './documents/documents.repository';
import { DocumentsService } from './documents/documents.service';
import { OutboxRelay } from './outbox/outbox.relay';
import { Reconciler } from './reconciliation/reconciler';
import type { DocumentDatabase } from './platform/db.types';
import { PlatformModule } from './platform/platform.module';
import { DB, KAFKA } from './platform/tokens';

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
        DocumentsRepository,
        DocumentsService,
        KnowledgeBases,
        { provide: MODEL_CATALOG, useClass: EmbeddingServiceCatalog },
        OutboxRelay,
        Reconciler,
        {
          // Pipeline status events in; each moves a document forward.
          provide: EVENT_CONSUMERS,
          inject: [KAFKA, DocumentsService, AccessResolver],
          useFactory: (kafka: Kafka, documents: DocumentsService, access: AccessResolver) => [
            // A group per instance: every replica drops its cached access when a policy changes.
            new EventConsumer(kafka, {
              groupId: instanceGroupId(`${config.KAFKA_GROUP_ID}-acl`),
              handlers: { [Topics.acl]: async (event) => access.invalidate(event.tenantId) },
              fromBeginning: false,
              log: consumerLog('PolicyConsumer'),
            }),
            new EventConsumer(kafka, {
              groupId: config.KAFKA_GROUP_ID,
              handlers: {
                [Topics.documentStatus]: (event) =>
                  documents.applyStatus(
                    toTenantId(event.tenantId),
                    event.payload,
                    new Date(event.occurredAt),
                  ),
              },
              log: consumerLog('StatusConsumer'),
            }),
          ],
        },
        EventConsumersHost,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [DB, EventConsumersHost],
          useFactory: (db: Kysely<DocumentDatabase>, consumers: EventConsumersHost) => [
            { name: 'postgres', check: async () => (await sql`select 1`.execute(db), true) },
            // Not ready while the Helm hook (or a newer replica) has migrations left to apply.
            {
              name: 'migrations',
              check: async () =>
                (await pendingMigrations(db, config.DB_SCHEMA, migrations)).length === 0,
            },
            { name: 'kafka-consumer', check: async () => consumers.allJoined },
          ],
        },
      ],
    };
  }
}
