import {
  DEPENDENCY_UNAVAILABLE,
  DomainError,
  ERROR_STATUS,
  ErrorKind,
  isTransient,
  RETRY_AFTER_SECONDS,
} from '@kb/errors';
import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import type { Response } from 'express';

/** The body of every REST error response. */
export interface ApiErrorBody {
  error: { code: string; message: string; details?: unknown };
}

export { DEPENDENCY_UNAVAILABLE, RETRY_AFTER_SECONDS } from '@kb/errors';

/** Codes for errors the framework raises before our code runs. */
const FRAMEWORK_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'permission_denied',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

/**
 * The one place REST errors become responses: `{ error: { code, message, details? } }`, never a
 * stack. A domain error's status comes from `ERROR_STATUS`, as its gRPC status does in libs/grpc.
 * An error that a dependency being away explains (`isTransient`, ADR 17) answers 503
 * `dependency_unavailable`; every 503 carries `Retry-After`.
 */
@Catch()
export class RestExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('RestExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const [status, body] = restErrorOf(exception);
    if (exception instanceof DomainError && exception.retryAfterSeconds !== undefined) {
      response.setHeader('Retry-After', String(exception.retryAfterSeconds));
    } else if (status === HttpStatus.SERVICE_UNAVAILABLE) {
      response.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    }
    if (status >= 500) {
      this.logger.error(
        exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
      );
    }
    response.status(status).json(body);
  }
}

/**
 * An error the body parser (or other Express middleware) raises before a handler runs, in the
 * `http-errors` shape: a 4xx `status` and `expose: true`, which marks the message as safe to show
 * (e.g. 413 "request entity too large").
 */
function isClientHttpError(error: unknown): error is Error & { status: number } {
  if (!(error instanceof Error)) return false;
  const { status, expose } = error as Error & { status?: unknown; expose?: unknown };
  return typeof status === 'number' && status >= 400 && status < 500 && expose === true;
}

/**
 * The status and body a REST client gets for an exception (exported for APIs that must answer in
 * another error shape, such as the OpenAI-compatible one, and still agree on status and code).
 */
export function restErrorOf(exception: unknown): [number, ApiErrorBody] {
  if (!(exception instanceof DomainError) && isTransient(exception)) {
    // The message stays generic: the error's own text names hosts and ports.
    return [
      ERROR_STATUS[ErrorKind.Unavailable].http,
      {
        error: {
          code: DEPENDENCY_UNAVAILABLE,
          message: 'a service this request needs is unavailable; try again shortly',
        },
      },
    ];
  }
  if (exception instanceof DomainError) {
    return [
      ERROR_STATUS[exception.kind].http,
      { error: { code: exception.code, message: exception.message, details: exception.details } },
    ];
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const response = exception.getResponse();
    const message =
      typeof response === 'object' && response !== null && 'message' in response
        ? String((response as { message: unknown }).message)
        : exception.message;
    return [status, { error: { code: FRAMEWORK_CODES[status] ?? 'http_error', message } }];
  }
  if (isClientHttpError(exception)) {
    const { status, message } = exception;
    return [status, { error: { code: FRAMEWORK_CODES[status] ?? 'bad_request', message } }];
  }
  return [
    HttpStatus.INTERNAL_SERVER_ERROR,
    { error: { code: 'internal', message: 'internal error' } },
  ];
}
