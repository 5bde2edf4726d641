import './telemetry';
import 'reflect-metadata';

import { tokenVerifierFrom } from '@kb/auth';
import { createDatabase, createPool, migrateAtStart } from '@kb/database';
import { embeddingProviderFromConfig, extraEmbeddingProviders } from '@kb/embeddings';
import { bootHttpService, FlexibleRateLimiter } from '@kb/http';
import { KafkaEventProducer, kafkaFromConfig } from '@kb/kafka';
import { createLogger } from '@kb/observability';
import { s3BlobStoreFromEnv } from '@kb/storage';

import { AppModule } from './app.module';
import { PgEmbeddingCache } from './cache/embedding-cache.repository';
import { loadEmbeddingConfig } from './config/embedding.config';
import { CACHE_SCHEMA, migrationPlans } from './migrations';
import { EmbeddingServiceExceptionFilter } from './openai/openai-exception.filter';
import type { DB } from './platform/db.generated';

async function main(): Promise<void> {
  const config = loadEmbeddingConfig();
  const logger = createLogger('embedding-service', config.LOG_LEVEL);
  // Before the model loads: a missing AUTH_JWT_SECRET / AUTH_JWKS_URL stops the boot at once.
  const verifier = tokenVerifierFrom(config);
  const provider = await embeddingProviderFromConfig(config);
  logger.log(
    `${config.EMBEDDING_PROVIDER} model ${provider.model} ready, dimension ${provider.dimension}`,
    'Embeddings',
  );
  const kafka = kafkaFromConfig(config, 'embedding-service');
  const producer = new KafkaEventProducer(kafka);
  await producer.connect();
  const blobs = s3BlobStoreFromEnv(config);
  await blobs.ensureBucket();
  await migrateAtStart(config.MIGRATE_ON_START, migrationPlans(config), (line) =>
    logger.log(line, 'Migrations'),
  );
  let cache = null;
  if (config.DATABASE_URL) {
    const pool = createPool({ url: config.DATABASE_URL, schema: CACHE_SCHEMA, maxConnections: 4 });
    const db = createDatabase<DB>(pool);
    cache = { store: new PgEmbeddingCache(db), close: () => db.destroy() };
  } else {
    logger.warn('DATABASE_URL is not set: no embedding cache, every chunk goes to the model');
  }
  await bootHttpService({
    module: AppModule.register({
      config,
      kafka,
      producer,
      blobs,
      provider,
      extraProviders: await extraEmbeddingProviders(
        config.EMBEDDING_EXTRA_MODELS,
        provider.dimension,
        config,
      ),
      cache,
      verifier,
      rateLimiter: FlexibleRateLimiter.fromConfig(config),
    }),
    auth: verifier,
    errorFilter: new EmbeddingServiceExceptionFilter(),
    logger,
    host: config.HOST,
    port: config.PORT,
    name: 'embedding-service',
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
