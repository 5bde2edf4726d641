import { errorBodyOf } from '@kb/api-client';

/** An error answer of a knowledge-base REST API: its status and the stable `error.code`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}

/** What one call of a generated client (`@kb/api-client`) answers: openapi-fetch's shape. */
export interface ApiAnswer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The body of a generated client's answer, or an `ApiError` with the API's status, code and
 * message.
 */
export async function answerOf<T>(call: Promise<ApiAnswer<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const refusal = errorBodyOf(error);
  throw new ApiError(
    response.status,
    refusal.code ?? 'error',
    refusal.message ?? response.statusText,
  );
}
