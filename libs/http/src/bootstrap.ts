import type { TokenVerifier } from '@kb/auth';
import type {
  DynamicModule,
  ExceptionFilter,
  INestApplication,
  LoggerService,
  Type,
} from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';

import { AuthGuard } from './auth/index';
import { BodyParserInterceptor, DEFAULT_BODY_LIMIT } from './request-body';
import { RestExceptionFilter } from './rest-exception.filter';

export interface BootOptions {
  module: Type<unknown> | DynamicModule;
  logger: LoggerService;
  host: string;
  port: number;
  name: string;
  /** Requires a bearer token on every route not marked @Public(). */
  auth?: TokenVerifier;
  /**
   * Other transports of the same app (a hybrid app), e.g. `GrpcTransport.connect` from libs/grpc.
   * They start listening before HTTP does, so a ready probe means every transport is up; they
   * close (draining in-flight calls) before the shutdown hooks release the stores.
   */
  transports?: Array<(app: INestApplication) => void>;
  /**
   * The app-wide error filter, for a service with routes that answer in another error shape
   * (embedding-service's OpenAI-compatible routes): it also renders what fails before a route runs,
   * such as a body the parser refuses. Default: `RestExceptionFilter`.
   */
  errorFilter?: ExceptionFilter;
  /**
   * The largest JSON or form body of a route without its own `@BodyLimit()` (express's `limit`);
   * past it, 413. Default: 100 kB. Bodies are read only once a route's guards have passed.
   */
  bodyLimit?: string;
}

/** Starts a service's HTTP server with the shared error filter and graceful shutdown on SIGTERM/SIGINT. */
export async function bootHttpService(options: BootOptions): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(options.module, {
    logger: options.logger,
    bufferLogs: true,
    // Nest's parsers are Express middleware, which runs before any guard: bodies are read by
    // `BodyParserInterceptor` instead, once the caller is authenticated (security review N3).
    bodyParser: false,
  });
  useRestDefaults(app, options.auth, options.errorFilter, options.bodyLimit);
  app.enableShutdownHooks();
  if (options.transports?.length) {
    for (const connect of options.transports) connect(app);
    await app.startAllMicroservices();
  }
  await app.listen(options.port, options.host);
  const url = await app.getUrl();
  options.logger.log(`${options.name} listening on ${url}`, 'Bootstrap');
  return app;
}

/**
 * What every REST app gets (tests included): the error filter, with a verifier the guard that
 * requires a bearer token on every route not marked @Public(), and the body parser that runs
 * after the guards (`bodyLimit` for a route without its own `@BodyLimit()`).
 */
export function useRestDefaults(
  app: INestApplication,
  auth?: TokenVerifier,
  errorFilter: ExceptionFilter = new RestExceptionFilter(),
  bodyLimit: string = DEFAULT_BODY_LIMIT,
): void {
  app.useGlobalFilters(errorFilter);
  if (auth) app.useGlobalGuards(new AuthGuard(auth, app.get(Reflector)));
  app.useGlobalInterceptors(new BodyParserInterceptor(app.get(Reflector), bodyLimit));
}
