import { status } from '@grpc/grpc-js';

import { ErrorKind } from './domain-error';

export interface TransportStatus {
  http: number;
  grpc: status;
}

/**
 * The one map from an error's kind to the status each transport answers with, used by the REST
 * exception filter (libs/http) and the gRPC one (libs/grpc) alike.
 */
export const ERROR_STATUS: Readonly<Record<ErrorKind, TransportStatus>> = {
  [ErrorKind.InvalidArgument]: { http: 400, grpc: status.INVALID_ARGUMENT },
  [ErrorKind.Unauthenticated]: { http: 401, grpc: status.UNAUTHENTICATED },
  [ErrorKind.PermissionDenied]: { http: 403, grpc: status.PERMISSION_DENIED },
  [ErrorKind.NotFound]: { http: 404, grpc: status.NOT_FOUND },
  [ErrorKind.AlreadyExists]: { http: 409, grpc: status.ALREADY_EXISTS },
  [ErrorKind.FailedPrecondition]: { http: 409, grpc: status.FAILED_PRECONDITION },
  [ErrorKind.ResourceExhausted]: { http: 429, grpc: status.RESOURCE_EXHAUSTED },
  [ErrorKind.Unavailable]: { http: 503, grpc: status.UNAVAILABLE },
  [ErrorKind.Internal]: { http: 500, grpc: status.INTERNAL },
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
