import './telemetry';
import 'reflect-metadata';

import { tokenVerifierFrom } from '@kb/auth';
import { createDatabase, createPool, migrateAtStart } from '@kb/database';
import { bootHttpService, FlexibleRateLimiter } from '@kb/http';
import { kafkaFromConfig } from '@kb/kafka';
import { createLogger } from '@kb/observability';

import { AppModule } from './app.module';
import { loadWebhookConfig } from './config/webhook.config';
import { HttpReceiverSender } from './deliveries/receiver.sender';
import { migrationPlans } from './migrations';
import type { DB } from './platform/db.generated';

async function main(): Promise<void> {
  const config = loadWebhookConfig();
  const logger = createLogger('webhook-service', config.LOG_LEVEL);
  if (config.WEBHOOK_ALLOW_PRIVATE_URLS) {
    logger.warn(
      'WEBHOOK_ALLOW_PRIVATE_URLS is on: receivers on loopback and private networks are allowed',
      'Config',
    );
  }
  await migrateAtStart(config.MIGRATE_ON_START, migrationPlans(config), (line) =>
    logger.log(line, 'Migrations'),
  );
  const db = createDatabase<DB>(
    createPool({ url: config.DATABASE_URL, schema: config.DB_SCHEMA, maxConnections: 6 }),
  );
  const verifier = tokenVerifierFrom(config);
  await bootHttpService({
    module: AppModule.register({
      config,
      kafka: kafkaFromConfig(config, 'webhook-service'),
      db,
      verifier,
      sender: new HttpReceiverSender({
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_URLS,
        userAgent: 'kb-webhooks/1',
      }),
      rateLimiter: FlexibleRateLimiter.fromConfig(config),
      closers: [() => db.destroy()],
    }),
    logger,
    host: config.HOST,
    port: config.PORT,
    name: 'webhook-service',
    auth: verifier,
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
