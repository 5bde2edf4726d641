import { DomainError } from '@kb/errors';
import { restErrorOf, RestExceptionFilter } from '@kb/http';
import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';

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
    const response = host.switchToHttp().getResponse<Response>();
    // rate_limited and model_busy say when to try again, as on every other route.
    if (exception instanceof DomainError && exception.retryAfterSeconds !== undefined) {
      response.setHeader('Retry-After', String(exception.retryAfterSeconds));
    }
    response.status(status).json(body);
  }
}

/** The OpenAI-compatible paths: `/v1/embeddings`, `/v1/models` and `/v1/models/{id}`. */
const OPENAI_PATH = /^\/v1\/(embeddings|models)(\/|$)/;

/**
 * embedding-service's app-wide filter: an error on an OpenAI-compatible path answers in OpenAI's
 * shape even when it happens before the route runs (a body that is not JSON, a body over the
 * limit), every other path in the API's own shape. The controller's own filter covers what its
 * handlers throw; this one covers what Express and the guards throw for those paths.
 */
@Catch()
export class EmbeddingServiceExceptionFilter implements ExceptionFilter {
  private readonly openAi = new OpenAiExceptionFilter();
  private readonly rest = new RestExceptionFilter();

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<Request>();
    const filter = OPENAI_PATH.test(request.path) ? this.openAi : this.rest;
    filter.catch(exception, host);
  }
}
