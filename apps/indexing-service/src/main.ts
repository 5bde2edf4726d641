import './telemetry';
import 'reflect-metadata';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { bootHttpService } from '@kb/http';
import { KafkaEventProducer, createKafka } from '@kb/kafka';
import { createLogger } from '@kb/observability';
import { PgDocumentIndexState, PgIndexGenerations } from '@kb/index-state';
import { LEXICAL_SCHEMA, PgLexicalIndex } from '@kb/lexical-index';
import { s3BlobStoreFromEnv } from '@kb/storage';
import { vectorStoreFromEnv } from '@kb/vector-store';
import { AppModule } from './app.module';
import { loadIndexingConfig } from './config/indexing.config';
import { searchIndexMigrations } from './migrations/search-index.migrations';

async function main(): Promise<void> {
  const config = loadIndexingConfig();
  const logger = createLogger('indexing-service', config.LOG_LEVEL);
  if (config.MIGRATE_ON_START) {
    const pool = createPool({
      url: config.DATABASE_URL,
      schema: LEXICAL_SCHEMA,
      maxConnections: 1,
    });
    await migrateToLatest(createDatabase(pool), LEXICAL_SCHEMA, searchIndexMigrations);
    await pool.end();
  }
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'indexing-service' });
  const producer = new KafkaEventProducer(kafka);
  await producer.connect();
  const blobs = s3BlobStoreFromEnv(config);
  await blobs.ensureBucket();
  const vectors = vectorStoreFromEnv(config);
  const lexical = new PgLexicalIndex({ url: config.DATABASE_URL });
  const generations = new PgIndexGenerations({ url: config.DATABASE_URL });
  const indexState = new PgDocumentIndexState({ url: config.DATABASE_URL });
  await bootHttpService({
    module: AppModule.register({
      config,
      kafka,
      producer,
      blobs,
      vectors,
      lexical,
      generations,
      indexState,
    }),
    logger,
    host: config.HOST,
    port: config.PORT,
    name: 'indexing-service',
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
