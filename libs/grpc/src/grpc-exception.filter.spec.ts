import { status } from '@grpc/grpc-js';
import { DomainError, ErrorKind } from '@kb/errors';

import { ERROR_CODE_METADATA, RETRY_AFTER_METADATA, toGrpcStatus } from './grpc-exception.filter';

describe('toGrpcStatus', () => {
  it('answers a domain error with the gRPC status of its kind, its message and its code', () => {
    const result = toGrpcStatus(
      new DomainError('search_unavailable', ErrorKind.Unavailable, 'both indexes are down'),
    );
    expect(result).toMatchObject({ code: status.UNAVAILABLE, details: 'both indexes are down' });
    expect(result.metadata?.get(ERROR_CODE_METADATA)).toEqual(['search_unavailable']);
  });

  it('answers a spent budget with RESOURCE_EXHAUSTED and a retry-after trailer', () => {
    const result = toGrpcStatus(
      new DomainError('rate_limited', ErrorKind.ResourceExhausted, 'slow down', undefined, {
        retryAfterSeconds: 3,
      }),
    );
    expect(result.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(result.metadata?.get(ERROR_CODE_METADATA)).toEqual(['rate_limited']);
    expect(result.metadata?.get(RETRY_AFTER_METADATA)).toEqual(['3']);
  });

  it('answers a dependency being away with UNAVAILABLE, a stable code and no host in the text', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    const result = toGrpcStatus(refused);
    expect(result.code).toBe(status.UNAVAILABLE);
    expect(result.details).not.toMatch(/127\.0\.0\.1|5432/);
    expect(result.metadata?.get(ERROR_CODE_METADATA)).toEqual(['dependency_unavailable']);
    expect(result.metadata?.get(RETRY_AFTER_METADATA)).toEqual(['5']);
  });

  it('hides anything else behind INTERNAL', () => {
    const result = toGrpcStatus(new Error('password=hunter2'));
    expect(result).toEqual({ code: status.INTERNAL, details: 'internal error' });
  });
});
