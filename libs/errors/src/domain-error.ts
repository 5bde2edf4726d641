/**
 * What kind of failure an error is, independent of any transport. Each domain maps its own codes
 * to a kind (an exhaustive `Record<Code, ErrorKind>` beside its code enum); `ERROR_STATUS`
 * (error-status.ts) is the one place a kind becomes an HTTP or a gRPC status.
 */
export enum ErrorKind {
  InvalidArgument = 'invalid_argument',
  Unauthenticated = 'unauthenticated',
  PermissionDenied = 'permission_denied',
  NotFound = 'not_found',
  AlreadyExists = 'already_exists',
  /** The request is valid but the resource's state forbids it (e.g. not empty, immutable). */
  FailedPrecondition = 'failed_precondition',
  /** A budget of the caller's is spent (a rate limit); retry after the error's `retryAfterSeconds`. */
  ResourceExhausted = 'resource_exhausted',
  Unavailable = 'unavailable',
  /** The caller's time budget (a gRPC deadline, a REST `timeoutMs`) ran out before an answer. */
  DeadlineExceeded = 'deadline_exceeded',
  Internal = 'internal',
}

export interface DomainErrorOptions {
  /** When the call may succeed if repeated: REST answers `Retry-After`, gRPC a `retry-after` trailer. */
  retryAfterSeconds?: number;
}

/**
 * An error a client may see: a stable, machine-readable code of its domain, a kind and a message
 * safe to show. Domains subclass it with their code enum, e.g.
 * `class SearchError extends DomainError<SearchErrorCode>`. It knows nothing of HTTP or gRPC: the
 * REST and gRPC exception filters turn it into a response through `ERROR_STATUS`.
 */
export class DomainError<Code extends string = string> extends Error {
  constructor(
    readonly code: Code,
    readonly kind: ErrorKind,
    message: string,
    /** Structured detail for the client (REST renders it as `error.details`). */
    readonly details?: unknown,
    options: DomainErrorOptions = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** Whole seconds after which a retry may succeed, when the error knows (`Retry-After`). */
  readonly retryAfterSeconds: number | undefined;
}
