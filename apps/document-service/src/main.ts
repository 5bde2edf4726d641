import './telemetry';
import 'reflect-metadata';
import { tokenVerifierFrom } from '@kb/auth';
import { migrateAtStart } from '@kb/database';
import { bootHttpService } from '@kb/http';
import { createLogger } from '@kb/observability';
import { AppModule } from './app.module';
import { loadDocumentConfig } from './config/document.config';
import { migrationPlans } from './migrations';

async function main(): Promise<void> {
  const config = loadDocumentConfig();
  const logger = createLogger('document-service', config.LOG_LEVEL);
  await migrateAtStart(config.MIGRATE_ON_START, migrationPlans(config), (line) =>
    logger.log(line, 'Migrations'),
  );
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
