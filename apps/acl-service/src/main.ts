import './telemetry';
import 'reflect-metadata';
import { bootHttpService } from '@kb/http';
import { createLogger } from '@kb/observability';
import { AppModule } from './app.module';
import { loadAclConfig } from './config/acl.config';

async function main(): Promise<void> {
  const config = loadAclConfig();
  await bootHttpService({
    module: AppModule,
    logger: createLogger('acl-service', config.LOG_LEVEL),
    host: config.HOST,
    port: config.PORT,
    name: 'acl-service',
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
