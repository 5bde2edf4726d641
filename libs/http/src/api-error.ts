/**
 * An error a client may see: an HTTP status, a stable machine-readable code and a message.
 * Each domain defines its codes; the filter turns this into the response body.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface ApiErrorBody {
  error: { code: string; message: string; details?: unknown };
}
