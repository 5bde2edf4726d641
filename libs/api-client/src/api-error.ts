/** An error answer of a knowledge-base REST API: its status, stable `error.code` and message. */
export interface ApiRefusal {
  status: number;
  code: string;
  message: string;
}

/**
 * The status, code and message of an error answer. Every service answers errors as
 * `{ error: { code, message } }`; a body without them (a proxy's page, no body) gets `fallbackCode`
 * and a message naming the status.
 */
export function refusalOf(response: Response, body: unknown, fallbackCode: string): ApiRefusal {
  const error =
    typeof body === 'object' && body !== null && 'error' in body
      ? (body as { error?: { code?: unknown; message?: unknown } }).error
      : undefined;
  return {
    status: response.status,
    code: typeof error?.code === 'string' ? error.code : fallbackCode,
    message: typeof error?.message === 'string' ? error.message : `HTTP ${response.status}`,
  };
}
