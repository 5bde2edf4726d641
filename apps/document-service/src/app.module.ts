import { HealthController, READINESS_CHECKS, Readiness } from '@kb/http';
import { Module, type DynamicModule } from '@nestjs/common';
import { MulterModule } from '@nestjs/platform-express';
import { sql, type Kysely } from 'kysely';
import { DOCUMENT_CONFIG, type DocumentConfig } from './config/document.config';
import { DocumentsController } from './documents/documents.controller';
import { DocumentsRepository } from './documents/documents.repository';
import { DocumentsService } from './documents/documents.service';
import { StatusConsumer } from './documents/status.consumer';
import { OutboxRelay } from './outbox/outbox.relay';
import type { DocumentDatabase } from './platform/db.types';
import { PlatformModule } from './platform/platform.module';
import { DB } from './platform/tokens';

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
        // Larger uploads are refused with 413 before anything is stored.
        MulterModule.register({ limits: { fileSize: config.MAX_UPLOAD_BYTES, files: 1 } }),
      ],
      controllers: [DocumentsController, HealthController],
      providers: [
        DocumentsRepository,
        DocumentsService,
        OutboxRelay,
        StatusConsumer,
        Readiness,
        {
          provide: READINESS_CHECKS,
          inject: [DB, StatusConsumer],
          useFactory: (db: Kysely<DocumentDatabase>, status: StatusConsumer) => [
            { name: 'postgres', check: async () => (await sql`select 1`.execute(db), true) },
            { name: 'kafka-consumer', check: async () => status.consumer.isJoined },
          ],
        },
      ],
    };
  }
}
