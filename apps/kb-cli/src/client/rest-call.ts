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

/**
 * One JSON call to a knowledge-base REST API with a bearer token: the parsed answer, or an
 * `ApiError` with the API's status, code and message.
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
  const answer = (await response.json().catch(() => ({}))) as T & {
    error?: { code: string; message: string };
  };
  if (!response.ok) {
    throw new ApiError(
      response.status,
      answer.error?.code ?? 'error',
      answer.error?.message ?? response.statusText,
    );
  }
  return answer;
}
