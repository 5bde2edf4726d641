import './telemetry';
import 'reflect-metadata';

import { migrateAtStart } from '@kb/database';
import { bootHttpService } from '@kb/http';
import {
  MirroredIndexGenerations,
  PgDocumentIndexState,
  PgIndexGenerations,
  SettlingIndexGenerations,
} from '@kb/index-state';
import { KafkaEventProducer, kafkaFromConfig } from '@kb/kafka';
import { PgLexicalIndex } from '@kb/lexical-index';
import { createLogger } from '@kb/observability';
import { s3BlobStoreFromEnv } from '@kb/storage';
import { pineconeLexicalIndexFromEnv, vectorStoreFromEnv } from '@kb/vector-store';

import { AppModule } from './app.module';
import { loadIndexingConfig } from './config/indexing.config';
import { migrationPlans } from './migrations';
import { noSearchCache, RedisSearchCachePurger } from './removal/search-cache.purger';

async function main(): Promise<void> {
  const config = loadIndexingConfig();
  const logger = createLogger('indexing-service', config.LOG_LEVEL);
  await migrateAtStart(config.MIGRATE_ON_START, migrationPlans(config), (line) =>
    logger.log(line, 'Migrations'),
  );
  const kafka = kafkaFromConfig(config, 'indexing-service');
  const producer = new KafkaEventProducer(kafka);
  await producer.connect();
  const blobs = s3BlobStoreFromEnv(config);
  await blobs.ensureBucket();
  // A dimension's table is migrated when its first vectors arrive, or only checked (see config).
  const vectors = vectorStoreFromEnv(config, { migrate: config.MIGRATE_ON_START });
  // With Pinecone, the lexical half too: sparse vectors there, the chunk rows in Postgres (ADR 57).
  const rows = new PgLexicalIndex({ url: config.DATABASE_URL });
  const lexical = pineconeLexicalIndexFromEnv(config, rows) ?? rows;
  const searchCache = config.REDIS_URL
    ? RedisSearchCachePurger.connect({ ...config, REDIS_URL: config.REDIS_URL })
    : noSearchCache;
  // Every bump (the settled repeats too) is raised in the Redis mirror query-service reads with
  // each cached result (docs/adr/0029).
  const generations = new SettlingIndexGenerations(
    new MirroredIndexGenerations(
      new PgIndexGenerations({ url: config.DATABASE_URL }),
      searchCache,
      (error) => logger.warn(`generation mirror not raised: ${String(error)}`, 'Generations'),
    ),
    config.GENERATION_SETTLE_MS ?? (config.VECTOR_STORE === 'pinecone' ? 10_000 : 0),
  );
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
      searchCache,
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
