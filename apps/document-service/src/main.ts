import './telemetry';
import 'reflect-metadata';

import { tokenVerifierFrom } from '@kb/auth';
import { createDatabase, createPool, migrateAtStart } from '@kb/database';
import { bootHttpService, createRedisClient, FlexibleRateLimiter } from '@kb/http';
import {
  MirroredIndexGenerations,
  PgIndexGenerations,
  RedisGenerationMirror,
} from '@kb/index-state';
import { KafkaEventProducer, kafkaFromConfig } from '@kb/kafka';
import { createLogger } from '@kb/observability';
import { s3BlobStoreFromEnv } from '@kb/storage';

import { AppModule } from './app.module';
import { loadDocumentConfig } from './config/document.config';
import { migrationPlans } from './migrations';
import type { DocumentDatabase } from './platform/db.types';

async function main(): Promise<void> {
  const config = loadDocumentConfig();
  const logger = createLogger('document-service', config.LOG_LEVEL);
  await migrateAtStart(config.MIGRATE_ON_START, migrationPlans(config), (line) =>
    logger.log(line, 'Migrations'),
  );
  const db = createDatabase<DocumentDatabase>(
    createPool({
      url: config.DATABASE_URL,
      schema: config.DB_SCHEMA,
      applicationName: 'document-service',
    }),
  );
  const kafka = kafkaFromConfig(config, 'document-service');
  const producer = new KafkaEventProducer(kafka);
  await producer.connect();
  const blobs = s3BlobStoreFromEnv(config);
  await blobs.ensureBucket();
  const verifier = tokenVerifierFrom(config);
  // indexing-service's table (same database): emptying retires cached search results at once,
  // raised in the Redis mirror query-service reads with each cached result (docs/adr/0029).
  const pgGenerations = new PgIndexGenerations({ url: config.DATABASE_URL, maxConnections: 1 });
  const redis = config.REDIS_URL
    ? createRedisClient({ ...config, REDIS_URL: config.REDIS_URL })
    : undefined;
  redis?.on('error', (error: unknown) => logger.warn(`redis: ${String(error)}`, 'Generations'));
  // Not awaited: with Redis down the service still starts, and the client keeps reconnecting.
  void redis?.connect().catch(() => undefined);
  const generations = redis
    ? new MirroredIndexGenerations(pgGenerations, new RedisGenerationMirror(redis), (error) =>
        logger.warn(`generation mirror not raised: ${String(error)}`, 'Generations'),
      )
    : pgGenerations;
  await bootHttpService({
    module: AppModule.register({
      config,
      db,
      kafka,
      producer,
      blobs,
      verifier,
      generations: {
        bump: (tenantId) => generations.bump(tenantId),
        close: async () => {
          await generations.close();
          if (redis?.isReady) await redis.close().catch(() => undefined);
          else if (redis?.isOpen) redis.destroy();
        },
      },
      rateLimiter: FlexibleRateLimiter.fromConfig(config),
    }),
    logger,
    host: config.HOST,
    port: config.PORT,
    name: 'document-service',
    auth: verifier,
    // Every other body stays under 100 kB; the routes that take more say so (@BodyLimit), and
    // every body is read after the guards (security review N3).
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
