import { restErrorOf } from '@kb/http';
import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import type { Response } from 'express';

import { OpenAiError } from './openai.errors';

/** OpenAI's error body: what its clients parse into `APIError` (message, type, param, code). */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

/** OpenAI's `type` for a status; its clients pick the error class by status, the type is a hint. */
function typeOf(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

/**
 * The OpenAI-compatible routes answer errors in OpenAI's shape, so its SDKs show them as they
 * would OpenAI's. Status and code are what every other route would answer (`restErrorOf`, ADR 15):
 * only the envelope differs. Covers the token guard's 401 and the body parser's 413 too.
 */
@Catch()
export class OpenAiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('OpenAiExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const [status, { error }] = restErrorOf(exception);
    if (status >= 500) {
      this.logger.error(
        exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
      );
    }
    const body: OpenAiErrorBody = {
      error: {
        message: error.message,
        type: typeOf(status),
        param: exception instanceof OpenAiError ? exception.param : null,
        code: error.code,
      },
    };
    host.switchToHttp().getResponse<Response>().status(status).json(body);
  }
}
