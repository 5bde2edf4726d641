import type { DynamicModule, INestApplication, LoggerService, Type } from '@nestjs/common';
import type { TokenVerifier } from '@kb/auth';
import { NestFactory, Reflector } from '@nestjs/core';
import { ApiErrorFilter } from './api-error.filter';
import { AuthGuard } from './auth';

export interface BootOptions {
  module: Type<unknown> | DynamicModule;
  logger: LoggerService;
  host: string;
  port: number;
  name: string;
  /** Requires a bearer token on every route not marked @Public(). */
  auth?: TokenVerifier;
}

/** Starts a service's HTTP server with the shared error filter and graceful shutdown on SIGTERM/SIGINT. */
export async function bootHttpService(options: BootOptions): Promise<INestApplication> {
  const app = await NestFactory.create(options.module, {
    logger: options.logger,
    bufferLogs: true,
  });
  app.useGlobalFilters(new ApiErrorFilter());
  if (options.auth) app.useGlobalGuards(new AuthGuard(options.auth, app.get(Reflector)));
  app.enableShutdownHooks();
  await app.listen(options.port, options.host);
  const url = await app.getUrl();
  options.logger.log(`${options.name} listening on ${url}`, 'Bootstrap');
  return app;
}
