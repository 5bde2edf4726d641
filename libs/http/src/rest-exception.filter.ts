import { DomainError, ERROR_STATUS } from '@kb/errors';
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
 */
@Catch()
export class RestExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('RestExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const [status, body] = restErrorOf(exception);
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
