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

/**
 * One untyped JSON call to a knowledge-base REST API with a bearer token: the parsed answer, or an
 * `ApiError`. Only `kb knowledge-bases` and `kb sources` still call it; new code uses the
 * generated clients of `@kb/api-client` with `answerOf` (ADR 37 lists this exception).
 */
export async function restCall<T>(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return answerOf<T>(
    response.json().then(
      (answer: unknown) => ({ data: answer as T, error: answer, response }),
      () => ({ response }),
    ),
  );
}
