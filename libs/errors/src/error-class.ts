import { DomainError, ErrorKind } from './domain-error';

/**
 * Whether trying again can help (ADR 17):
 * - `transient`: a dependency is away (refused or reset connection, a database restarting, S3
 *   answering 5xx or SlowDown, Redis offline, a broker gone). Nothing is wrong with the input;
 *   waiting and trying again will succeed once the dependency is back, however long that takes.
 * - `permanent`: the input itself causes it (a PermanentError: unsupported or malformed content).
 *   Trying again fails the same way.
 * - `unknown`: anything else (a bug, a constraint violation): worth a few tries, then a verdict.
 */
export enum ErrorClass {
  Transient = 'transient',
  Permanent = 'permanent',
  Unknown = 'unknown',
}

/**
 * Thrown when retrying cannot help because of the input itself (unsupported content, malformed
 * input): a Kafka consumer dead-letters the message at once, with `reason` as its
 * machine-readable code.
 */
export class PermanentError extends Error {
  constructor(
    readonly reason: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'PermanentError';
  }
}

export function isPermanent(error: unknown): error is PermanentError {
  return error instanceof PermanentError;
}

/** Socket-level failures: the peer is not there, went away, or does not answer. */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND', // DNS: a service's name is missing while it restarts (or is misconfigured)
  'EAI_AGAIN',
  'UND_ERR_SOCKET', // fetch (undici)
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * Node's own text for those failures (`connect ECONNREFUSED 10.0.0.7:5432`), for an error that
 * was re-wrapped as text on the way (the AWS SDK wraps a socket error from another realm so).
 */
const NETWORK_MESSAGE =
  /\b(connect|read|write) (ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH)\b|\bgetaddrinfo (ENOTFOUND|EAI_AGAIN)\b/;

/**
 * PostgreSQL SQLSTATEs of a server that is away or cannot take us yet: class 08 (connection
 * exception), 57P01-57P03 (shutting down, crashed, starting up) and 53300 (too many connections).
 */
function isUnavailableSqlState(code: string): boolean {
  return /^08[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code) || code === '53300';
}

/** node-postgres raises these as plain Errors when a connection fails or dies under a query. */
const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
  /^Connection closed/,
];

/** node-redis's connection-state errors (their classes set no `name`, so the class name counts). */
const REDIS_CONNECTION_ERRORS: ReadonlySet<string> = new Set([
  'ConnectionTimeoutError',
  'SocketTimeoutError',
  'ClientOfflineError',
  'SocketClosedUnexpectedlyError',
  'ReconnectStrategyError',
  'RootNodesUnavailableError',
]);

/** Redis replies of a server that is loading or failing over. */
const REDIS_BUSY_REPLY = /^(LOADING|MASTERDOWN|TRYAGAIN|CLUSTERDOWN) /;

/** S3 error names that mean "slow down" or "try again", whatever the status. */
const S3_RETRY_NAMES: ReadonlySet<string> = new Set([
  'SlowDown',
  'ServiceUnavailable',
  'InternalError',
  'RequestTimeout',
  'TimeoutError',
  'ThrottlingException',
]);

/** kafkajs errors of a broker that is away or electing a leader. */
const KAFKA_CONNECTION_ERRORS: ReadonlySet<string> = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSLockTimeout',
]);

/** gRPC status UNAVAILABLE: the server is down or restarting. */
const GRPC_UNAVAILABLE = 14;

interface ErrorFields {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  retriable?: unknown;
  transient?: unknown;
  details?: unknown;
  metadata?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $retryable?: unknown;
}

/** The one classification of an error (ADR 17); see `ErrorClass`. */
export function classifyError(error: unknown): ErrorClass {
  if (isPermanent(error)) return ErrorClass.Permanent;
  return isTransient(error) ? ErrorClass.Transient : ErrorClass.Unknown;
}

/**
 * True when a dependency being away explains the error, looking through wrappers (`cause`,
 * kafkajs's `originalError`, Node's AggregateError of a dual-stack connect, node-redis's
 * `originalError`/`socketError`).
 */
export function isTransient(error: unknown): boolean {
  return someInChain(error, isTransientItself);
}

function isTransientItself(error: object): boolean {
  if (error instanceof DomainError) return error.kind === ErrorKind.Unavailable;
  if (isPermanent(error)) return false;
  const e = error as ErrorFields;
  const name = typeof e.name === 'string' ? e.name : '';
  const message = typeof e.message === 'string' ? e.message : '';
  // An error that says what it is (e.g. the embedding client's `transient` after its own retries).
  if (e.transient === true) return true;
  if (typeof e.code === 'string') {
    if (NETWORK_CODES.has(e.code)) return true;
    if (isUnavailableSqlState(e.code)) return true;
  }
  if (NETWORK_MESSAGE.test(message)) return true;
  if (PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(message))) return true;
  if (REDIS_CONNECTION_ERRORS.has(error.constructor.name) || REDIS_CONNECTION_ERRORS.has(name)) {
    return true;
  }
  if (REDIS_BUSY_REPLY.test(message)) return true;
  if (isS3Unavailable(e, name)) return true;
  if (KAFKA_CONNECTION_ERRORS.has(name)) return true;
  if (name.startsWith('KafkaJS') && e.retriable === true) return true;
  if (e.code === GRPC_UNAVAILABLE && 'details' in e && 'metadata' in e) return true;
  return false;
}

function isS3Unavailable(e: ErrorFields, name: string): boolean {
  if (!e.$metadata) return false;
  const status = e.$metadata.httpStatusCode;
  if (typeof status === 'number' && (status >= 500 || status === 429)) return true;
  return S3_RETRY_NAMES.has(name) || e.$retryable !== undefined;
}

/** Whether `test` holds for the error or anything it wraps (depth-limited against cycles). */
function someInChain(error: unknown, test: (error: object) => boolean, depth = 0): boolean {
  if (depth > 8 || typeof error !== 'object' || error === null) return false;
  if (test(error)) return true;
  // A deliberate verdict is not second-guessed by what it wraps.
  if (error instanceof DomainError || isPermanent(error)) return false;
  const wrapped = error as {
    cause?: unknown;
    originalError?: unknown;
    socketError?: unknown;
    errors?: unknown;
  };
  const inner = [wrapped.cause, wrapped.originalError, wrapped.socketError];
  if (Array.isArray(wrapped.errors)) inner.push(...(wrapped.errors as unknown[]));
  return inner.some((next) => someInChain(next, test, depth + 1));
}
