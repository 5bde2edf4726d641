import { AuthError, AuthErrorCode } from '@kb/auth';
import { DomainError, ErrorKind } from '@kb/errors';
import { type ArgumentsHost, BadRequestException, PayloadTooLargeException } from '@nestjs/common';
import { z } from 'zod';

import { RestExceptionFilter } from './rest-exception.filter';
import { parseBody } from './zod-body';

function capture(exception: unknown): {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
} {
  const result: { status: number; body: unknown; headers?: Record<string, string> } = {
    status: 0,
    body: undefined,
  };
  const response = {
    setHeader(name: string, value: string) {
      result.headers = { ...result.headers, [name]: value };
    },
    status(code: number) {
      result.status = code;
      return this;
    },
    json(body: unknown) {
      result.body = body;
    },
  };
  const host = {
    switchToHttp: () => ({ getResponse: () => response }),
  } as unknown as ArgumentsHost;
  new RestExceptionFilter().catch(exception, host);
  return result;
}

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('nothing was thrown');
}

describe('RestExceptionFilter', () => {
  it('answers 503 dependency_unavailable with Retry-After when a dependency is away', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.3.7:9000'), {
      code: 'ECONNREFUSED',
    });
    const result = capture(refused);
    expect(result).toEqual({
      status: 503,
      headers: { 'Retry-After': '5' },
      body: { error: { code: 'dependency_unavailable', message: expect.any(String) } },
    });
    expect(JSON.stringify(result.body)).not.toContain('10.0.3.7');
    const slowDown = Object.assign(new Error('Please reduce your request rate.'), {
      name: 'SlowDown',
      $metadata: { httpStatusCode: 503 },
    });
    expect(capture(slowDown).status).toBe(503);
  });

  it('gives every 503 a Retry-After, a domain error of kind unavailable too', () => {
    const result = capture(new DomainError('store_down', ErrorKind.Unavailable, 'index is down'));
    expect(result).toMatchObject({ status: 503, headers: { 'Retry-After': '5' } });
  });

  it('renders a domain error with the status of its kind, its code and message', () => {
    expect(capture(new AuthError(AuthErrorCode.PermissionDenied, 'admin on acl'))).toEqual({
      status: 403,
      body: { error: { code: 'permission_denied', message: 'admin on acl' } },
    });
    expect(capture(thrown(() => parseBody(z.object({ q: z.string() }), { q: 1 })))).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_argument', details: { problems: [expect.any(String)] } } },
    });
  });

  it('refuses a NUL character anywhere in a body, naming where (PostgreSQL cannot store it)', () => {
    const schema = z.object({ a: z.array(z.object({ b: z.string() })) });
    expect(capture(thrown(() => parseBody(schema, { a: [{ b: 'x\u0000y' }] })))).toEqual({
      status: 400,
      body: {
        error: {
          code: 'invalid_argument',
          message: 'a.0.b: must not contain the NUL character (U+0000)',
          details: { problems: ['a.0.b: must not contain the NUL character (U+0000)'] },
        },
      },
    });
    expect(() => parseBody(schema, { a: [{ b: 'fine' }] })).not.toThrow();
  });

  it('answers not found with 404, and both conflicts (exists, precondition) with 409', () => {
    class ThingError extends DomainError<string> {}
    expect(capture(new ThingError('thing_not_found', ErrorKind.NotFound, 'no thing x'))).toEqual({
      status: 404,
      body: { error: { code: 'thing_not_found', message: 'no thing x' } },
    });
    expect(capture(new ThingError('thing_exists', ErrorKind.AlreadyExists, 'x')).status).toBe(409);
    expect(
      capture(new ThingError('thing_not_empty', ErrorKind.FailedPrecondition, 'x')).status,
    ).toBe(409);
  });

  it('answers a spent budget with 429, its code and Retry-After', () => {
    const limited = new DomainError(
      'rate_limited',
      ErrorKind.ResourceExhausted,
      'slow down',
      undefined,
      {
        retryAfterSeconds: 7,
      },
    );
    expect(capture(limited)).toEqual({
      status: 429,
      body: { error: { code: 'rate_limited', message: 'slow down' } },
      headers: { 'Retry-After': '7' },
    });
  });

  it('gives framework errors a stable code', () => {
    expect(capture(new PayloadTooLargeException('File too large'))).toMatchObject({
      status: 413,
      body: { error: { code: 'payload_too_large', message: 'File too large' } },
    });
    expect(capture(new BadRequestException('bad'))).toMatchObject({
      status: 400,
      body: { error: { code: 'bad_request' } },
    });
  });

  it('hides unexpected errors behind a 500 without a stack', () => {
    const { status, body } = capture(new Error('secret detail'));
    expect(status).toBe(500);
    expect(JSON.stringify(body)).not.toContain('secret');
  });
});
