import { ClientOfflineError, ErrorReply, SocketClosedUnexpectedlyError } from '@redis/client';
import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
} from 'kafkajs';

import { DomainError, ErrorKind } from './domain-error';
import { classifyError, ErrorClass, isTransient, PermanentError } from './error-class';

/** A Node system error as net/dns raise it. */
const systemError = (code: string, message = `connect ${code} 127.0.0.1:9000`) =>
  Object.assign(new Error(message), { code, errno: -111, syscall: 'connect' });

/** A node-postgres DatabaseError: the server's SQLSTATE in `code`. */
const pgError = (code: string) =>
  Object.assign(new Error(`pg ${code}`), { name: 'error', code, severity: 'FATAL' });

/** An AWS SDK v3 service exception as the S3 client throws it. */
const s3Error = (name: string, httpStatusCode: number) =>
  Object.assign(new Error(name), { name, $fault: 'server', $metadata: { httpStatusCode } });

describe('classifyError', () => {
  it.each([
    ['ECONNREFUSED', systemError('ECONNREFUSED')],
    ['ECONNRESET', systemError('ECONNRESET', 'read ECONNRESET')],
    ['ETIMEDOUT', systemError('ETIMEDOUT')],
    ['EPIPE', systemError('EPIPE', 'write EPIPE')],
    ['ENOTFOUND (DNS)', systemError('ENOTFOUND', 'getaddrinfo ENOTFOUND minio')],
    [
      'an AggregateError of a dual-stack connect',
      new AggregateError([systemError('ECONNREFUSED'), systemError('ECONNREFUSED')], 'connect'),
    ],
    [
      'fetch failed, caused by a refused connect',
      new TypeError('fetch failed', { cause: systemError('ECONNREFUSED') }),
    ],
  ])('a socket failure is transient: %s', (_, error) => {
    expect(classifyError(error)).toBe(ErrorClass.Transient);
  });

  it('Node socket failures re-wrapped as text are transient', () => {
    expect(
      isTransient(new Error('AWS SDK error wrapper for Error: connect ECONNREFUSED 127.0.0.1:1')),
    ).toBe(true);
    expect(isTransient(new Error('getaddrinfo EAI_AGAIN s3.internal'))).toBe(true);
    expect(isTransient(new Error('the file mentions ECONNREFUSED'))).toBe(false);
  });

  it.each(['08006', '08001', '08P01', '57P01', '57P02', '57P03', '53300'])(
    'a Postgres connection-class SQLSTATE is transient: %s',
    (code) => {
      expect(isTransient(pgError(code))).toBe(true);
    },
  );

  it('node-postgres connection messages are transient', () => {
    expect(isTransient(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isTransient(new Error('timeout exceeded when trying to connect'))).toBe(true);
  });

  it.each(['23505', '42P01', '22P02', '40001'])(
    'other SQLSTATEs (constraint, missing table, bad input, serialization) are not: %s',
    (code) => {
      expect(classifyError(pgError(code))).toBe(ErrorClass.Unknown);
    },
  );

  it('S3 5xx, 429 and SlowDown are transient; 4xx are not', () => {
    expect(isTransient(s3Error('SlowDown', 503))).toBe(true);
    expect(isTransient(s3Error('InternalError', 500))).toBe(true);
    expect(isTransient(s3Error('TooManyRequests', 429))).toBe(true);
    expect(isTransient(s3Error('NoSuchKey', 404))).toBe(false);
    expect(isTransient(s3Error('AccessDenied', 403))).toBe(false);
  });

  it('Redis connection errors and a loading server are transient; a wrong command is not', () => {
    expect(isTransient(new ClientOfflineError())).toBe(true);
    expect(isTransient(new SocketClosedUnexpectedlyError())).toBe(true);
    expect(isTransient(new ErrorReply('LOADING Redis is loading the dataset in memory'))).toBe(
      true,
    );
    expect(isTransient(new ErrorReply('WRONGTYPE Operation against a key'))).toBe(false);
  });

  it('kafkajs connection errors are transient, also once its retries gave up', () => {
    const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED');
    expect(isTransient(refused)).toBe(true);
    expect(
      isTransient(new KafkaJSNumberOfRetriesExceeded(refused, { retryCount: 5, retryTime: 9 })),
    ).toBe(true);
    expect(
      isTransient(
        Object.assign(new KafkaJSProtocolError('leader not available'), { retriable: true }),
      ),
    ).toBe(true);
    expect(isTransient(new KafkaJSNonRetriableError('invalid topic'))).toBe(false);
  });

  it('a DomainError is transient only when its kind is Unavailable', () => {
    expect(isTransient(new DomainError('store_down', ErrorKind.Unavailable, 'down'))).toBe(true);
    expect(isTransient(new DomainError('bad', ErrorKind.InvalidArgument, 'bad'))).toBe(false);
  });

  it('an error that declares itself transient is (the embedding client after its retries)', () => {
    const error = Object.assign(new Error('429 from the embedding API'), { transient: true });
    expect(isTransient(error)).toBe(true);
  });

  it('a PermanentError is permanent, even when it wraps a socket error', () => {
    const error = new PermanentError('parse_error', 'not a PDF', {
      cause: systemError('ECONNRESET'),
    });
    expect(classifyError(error)).toBe(ErrorClass.Permanent);
    expect(isTransient(error)).toBe(false);
  });

  it('anything else is unknown: a bug is worth a few tries, not an endless wait', () => {
    expect(classifyError(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(
      ErrorClass.Unknown,
    );
    expect(classifyError('a string')).toBe(ErrorClass.Unknown);
    expect(classifyError(undefined)).toBe(ErrorClass.Unknown);
  });

  it('does not loop on a cause cycle', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(isTransient(a)).toBe(false);
  });
});
