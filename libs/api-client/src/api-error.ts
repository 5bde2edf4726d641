/**
 * The `error.code` and `error.message` of an error answer. Every service answers errors as
 * `{ error: { code, message } }`; a body without them (a proxy's page, no body, text) gives
 * neither, and each caller picks its own fallback.
 */
export function errorBodyOf(body: unknown): { code?: string; message?: string } {
  const error =
    typeof body === 'object' && body !== null && 'error' in body
      ? (body as { error?: { code?: unknown; message?: unknown } }).error
      : undefined;
  return {
    ...(typeof error?.code === 'string' ? { code: error.code } : {}),
    ...(typeof error?.message === 'string' ? { message: error.message } : {}),
  };
}
