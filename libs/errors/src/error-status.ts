import { ErrorKind } from './domain-error';

/**
 * The gRPC status codes this table uses, as the gRPC protocol numbers them (the same values as
 * `status` in @grpc/grpc-js): the error model stays free of any transport's package (ADR 13).
 */
export const GrpcCode = {
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode];

export interface TransportStatus {
  http: number;
  grpc: GrpcCode;
}

/**
 * The one map from an error's kind to the status each transport answers with, used by the REST
 * exception filter (libs/http) and the gRPC one (libs/grpc) alike.
 */
export const ERROR_STATUS: Readonly<Record<ErrorKind, TransportStatus>> = {
  [ErrorKind.InvalidArgument]: { http: 400, grpc: GrpcCode.INVALID_ARGUMENT },
  [ErrorKind.Unauthenticated]: { http: 401, grpc: GrpcCode.UNAUTHENTICATED },
  [ErrorKind.PermissionDenied]: { http: 403, grpc: GrpcCode.PERMISSION_DENIED },
  [ErrorKind.NotFound]: { http: 404, grpc: GrpcCode.NOT_FOUND },
  [ErrorKind.AlreadyExists]: { http: 409, grpc: GrpcCode.ALREADY_EXISTS },
  [ErrorKind.FailedPrecondition]: { http: 409, grpc: GrpcCode.FAILED_PRECONDITION },
  [ErrorKind.ResourceExhausted]: { http: 429, grpc: GrpcCode.RESOURCE_EXHAUSTED },
  [ErrorKind.Unavailable]: { http: 503, grpc: GrpcCode.UNAVAILABLE },
  [ErrorKind.DeadlineExceeded]: { http: 504, grpc: GrpcCode.DEADLINE_EXCEEDED },
  [ErrorKind.Internal]: { http: 500, grpc: GrpcCode.INTERNAL },
};

/**
 * The kind whose HTTP status this is (the first in table order), for answers relayed from another
 * service's REST API; `Internal` when none matches.
 */
export function errorKindOfHttpStatus(httpStatus: number): ErrorKind {
  const entry = Object.entries(ERROR_STATUS).find(([, s]) => s.http === httpStatus);
  return entry ? (entry[0] as ErrorKind) : ErrorKind.Internal;
}

/**
 * The code of a 503 (REST) or UNAVAILABLE (gRPC) whose cause is a dependency being away (a
 * database restarting, S3 refusing connections): the request was fine and will succeed once it is
 * back (ADR 17).
 */
export const DEPENDENCY_UNAVAILABLE = 'dependency_unavailable';

/** Seconds a client should wait before trying again after such an answer (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 5;
