import './telemetry';
import 'reflect-metadata';

import { tokenVerifierFrom } from '@kb/auth';
import { createDatabase, createPool, migrateAtStart } from '@kb/database';
import { GrpcTransport } from '@kb/grpc';
import { bootHttpService, FlexibleRateLimiter } from '@kb/http';
import { KafkaEventProducer, kafkaFromConfig } from '@kb/kafka';
import { createLogger } from '@kb/observability';

import { AppModule } from './app.module';
import { loadAclConfig } from './config/acl.config';
import { migrationPlans } from './migrations';
import type { DB } from './platform/db.generated';
import { enforcerSource } from './policy/enforcer.factory';

async function main(): Promise<void> {
  const config = loadAclConfig();
  const logger = createLogger('acl-service', config.LOG_LEVEL);
  await migrateAtStart(config.MIGRATE_ON_START, migrationPlans(config), (line) =>
    logger.log(line, 'Migrations'),
  );
  const pool = createPool({
    url: config.DATABASE_URL,
    schema: config.DB_SCHEMA,
    maxConnections: 4,
  });
  const db = createDatabase<DB>(pool);
  // casbin's rules live in the same schema, in the table casbin-pg-adapter expects.
  const enforcer = await enforcerSource(pool);
  const verifier = tokenVerifierFrom(config);
  const kafka = kafkaFromConfig(config, 'acl-service');
  const producer = new KafkaEventProducer(kafka);
  await producer.connect();
  await bootHttpService({
    module: AppModule.register({
      config,
      kafka,
      producer,
      enforcer,
      db,
      verifier,
      rateLimiter: FlexibleRateLimiter.fromConfig(config),
      closers: [() => producer.disconnect(), () => db.destroy()],
    }),
    logger,
    host: config.HOST,
    port: config.PORT,
    name: 'acl-service',
    auth: verifier,
    transports: [(app) => app.get(GrpcTransport).connect(app)],
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
