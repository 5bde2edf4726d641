import { createDatabase, createPool } from '@kb/database';
import { KafkaEventProducer, createKafka, type EventProducer } from '@kb/kafka';
import { shutdownTelemetry } from '@kb/observability';
import { S3BlobStore, s3BlobStoreFromEnv } from '@kb/storage';
import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import type { Kysely } from 'kysely';
import type { Pool } from 'pg';
import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import type { DocumentDatabase } from './db.types';
import { BLOB_STORE, CLOCK, DB, EVENT_PRODUCER, KAFKA, PG_POOL } from './tokens';

/** The service's external adapters, built once from validated config and closed on shutdown. */
@Global()
@Module({
  providers: [
    {
      provide: PG_POOL,
      inject: [DOCUMENT_CONFIG],
      useFactory: (config: DocumentConfig): Pool =>
        createPool({
          url: config.DATABASE_URL,
          schema: config.DB_SCHEMA,
          applicationName: 'document-service',
        }),
    },
    {
      provide: DB,
      inject: [PG_POOL],
      useFactory: (pool: Pool): Kysely<DocumentDatabase> => createDatabase<DocumentDatabase>(pool),
    },
    {
      provide: KAFKA,
      inject: [DOCUMENT_CONFIG],
      useFactory: (config: DocumentConfig) =>
        createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'document-service' }),
    },
    {
      provide: EVENT_PRODUCER,
      inject: [KAFKA],
      useFactory: async (kafka: Kafka) => {
        const producer = new KafkaEventProducer(kafka);
        await producer.connect();
        return producer;
      },
    },
    {
      provide: BLOB_STORE,
      inject: [DOCUMENT_CONFIG],
      useFactory: async (config: DocumentConfig) => {
        const store = s3BlobStoreFromEnv(config);
        await store.ensureBucket();
        return store;
      },
    },
    { provide: CLOCK, useValue: () => new Date() },
  ],
  exports: [PG_POOL, DB, KAFKA, EVENT_PRODUCER, BLOB_STORE, CLOCK],
})
export class PlatformModule implements OnApplicationShutdown {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_PRODUCER) private readonly producer: EventProducer,
    @Inject(BLOB_STORE) private readonly blobs: S3BlobStore,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.producer.disconnect();
    this.blobs.destroy();
    await this.pool.end();
    await shutdownTelemetry();
  }
}
