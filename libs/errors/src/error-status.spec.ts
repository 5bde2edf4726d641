import { DomainError, ErrorKind } from './domain-error';
import { ERROR_STATUS, errorKindOfHttpStatus } from './error-status';

describe('ERROR_STATUS', () => {
  it('answers each kind with the HTTP and gRPC status the services used before', () => {
    expect(ERROR_STATUS[ErrorKind.InvalidArgument]).toEqual({
      http: 400,
      grpc: 3,
    });
    expect(ERROR_STATUS[ErrorKind.Unauthenticated]).toEqual({
      http: 401,
      grpc: 16,
    });
    expect(ERROR_STATUS[ErrorKind.PermissionDenied]).toEqual({
      http: 403,
      grpc: 7,
    });
    expect(ERROR_STATUS[ErrorKind.NotFound]).toEqual({ http: 404, grpc: 5 });
    expect(ERROR_STATUS[ErrorKind.ResourceExhausted]).toEqual({
      http: 429,
      grpc: 8,
    });
    expect(ERROR_STATUS[ErrorKind.Unavailable]).toEqual({ http: 503, grpc: 14 });
    expect(ERROR_STATUS[ErrorKind.Internal]).toEqual({ http: 500, grpc: 13 });
  });

  it.each([400, 401, 403, 404, 409, 429, 503])(
    'finds a kind for HTTP %i that answers with the same status',
    (httpStatus) => {
      expect(ERROR_STATUS[errorKindOfHttpStatus(httpStatus)].http).toBe(httpStatus);
    },
  );

  it('treats an HTTP status it does not know as internal', () => {
    expect(errorKindOfHttpStatus(418)).toBe(ErrorKind.Internal);
  });
});

describe('DomainError', () => {
  enum ThingErrorCode {
    Missing = 'thing_missing',
  }
  class ThingError extends DomainError<ThingErrorCode> {}

  it('carries its code, kind, message and the subclass name', () => {
    const error = new ThingError(ThingErrorCode.Missing, ErrorKind.NotFound, 'no thing 7');
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({
      code: 'thing_missing',
      kind: ErrorKind.NotFound,
      message: 'no thing 7',
      name: 'ThingError',
    });
  });
});
