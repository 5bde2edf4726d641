import './telemetry';
import 'reflect-metadata';
import { tokenVerifierFrom } from '@kb/auth';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { bootHttpService } from '@kb/http';
import { createLogger } from '@kb/observability';
import { AppModule } from './app.module';
import { loadDocumentConfig } from './config/document.config';
import { migrations } from './migrations';

async function main(): Promise<void> {
  const config = loadDocumentConfig();
  const logger = createLogger('document-service', config.LOG_LEVEL);
  if (config.MIGRATE_ON_START) {
    const pool = createPool({
      url: config.DATABASE_URL,
      schema: config.DB_SCHEMA,
      maxConnections: 1,
    });
    const { applied } = await migrateToLatest(createDatabase(pool), config.DB_SCHEMA, migrations);
    await pool.end();
    logger.log(
      `migrations applied: ${applied.length ? applied.join(', ') : 'none pending'}`,
      'Migrations',
    );
  }
  await bootHttpService({
    module: AppModule.register(config),
    logger,
    host: config.HOST,
    port: config.PORT,
    name: 'document-service',
    auth: tokenVerifierFrom(config),
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
