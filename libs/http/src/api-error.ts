import { DomainError, errorKindOfHttpStatus } from '@kb/errors';

/**
 * @deprecated Throw a domain error instead (`DomainError` subclass with a code enum and its
 * kinds). Kept so document-service answers as before until it is converted: the kind comes from
 * the HTTP status through `ERROR_STATUS`, so the REST filter answers with that same status.
 */
export class ApiError extends DomainError<string> {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    details?: unknown,
  ) {
    super(code, errorKindOfHttpStatus(status), message, details);
  }
}

/** The body of every REST error response. */
export interface ApiErrorBody {
  error: { code: string; message: string; details?: unknown };
}
