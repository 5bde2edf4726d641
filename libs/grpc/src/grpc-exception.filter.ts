import { Metadata, status, type StatusObject } from '@grpc/grpc-js';
import {
  DEPENDENCY_UNAVAILABLE,
  DomainError,
  ERROR_STATUS,
  isTransient,
  RETRY_AFTER_SECONDS,
} from '@kb/errors';
import { Catch, Logger, type RpcExceptionFilter } from '@nestjs/common';
import { type Observable, throwError } from 'rxjs';

/** The header a client reads the stable error code from (as REST's `error.code`). */
export const ERROR_CODE_METADATA = 'x-error-code';
/** Seconds after which a retry may succeed, when the error knows (as REST's `Retry-After`). */
export const RETRY_AFTER_METADATA = 'retry-after';

const logger = new Logger('GrpcExceptionFilter');

/**
 * The status a gRPC call ends with: a domain error's from `ERROR_STATUS` (the table the REST
 * filter uses), its message as details and its code in `x-error-code`. An error that a dependency
 * being away explains (a database restarting, S3 refusing connections: `isTransient`) is
 * UNAVAILABLE `dependency_unavailable` with a retry-after, so clients retry it as they would a 503.
 * Anything else is INTERNAL with a generic message, logged here and never shown to the client.
 */
export function toGrpcStatus(exception: unknown): Partial<StatusObject> {
  if (!(exception instanceof DomainError) && isTransient(exception)) {
    logger.warn(exception instanceof Error ? exception.message : String(exception));
    const metadata = new Metadata();
    metadata.set(ERROR_CODE_METADATA, DEPENDENCY_UNAVAILABLE);
    metadata.set(RETRY_AFTER_METADATA, String(RETRY_AFTER_SECONDS));
    // The error's own text names hosts and ports: the client gets a generic one.
    return {
      code: status.UNAVAILABLE,
      details: 'a service this request needs is unavailable; try again shortly',
      metadata,
    };
  }
  if (exception instanceof DomainError) {
    const metadata = new Metadata();
    metadata.set(ERROR_CODE_METADATA, exception.code);
    if (exception.retryAfterSeconds !== undefined) {
      metadata.set(RETRY_AFTER_METADATA, String(exception.retryAfterSeconds));
    }
    return { code: ERROR_STATUS[exception.kind].grpc, details: exception.message, metadata };
  }
  logger.error(
    exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
  );
  return { code: status.INTERNAL, details: 'internal error' };
}

/** The one place gRPC errors become statuses; `@GrpcService()` installs it on every gRPC controller. */
@Catch()
export class GrpcExceptionFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown): Observable<never> {
    return throwError(() => toGrpcStatus(exception));
  }
}
