import { DomainError, ErrorKind } from '@kb/errors';

export enum ErasureErrorCode {
  NotFound = 'erasure_not_found',
  /** Erasures are for tenant admins. */
  PermissionDenied = 'permission_denied',
  /** `where` is not a filter of the listing language (docs/adr/0007). */
  InvalidFilter = 'invalid_filter',
}

const KIND: Record<ErasureErrorCode, ErrorKind> = {
  [ErasureErrorCode.NotFound]: ErrorKind.NotFound,
  [ErasureErrorCode.PermissionDenied]: ErrorKind.PermissionDenied,
  [ErasureErrorCode.InvalidFilter]: ErrorKind.InvalidArgument,
};

export class ErasureError extends DomainError<ErasureErrorCode> {
  constructor(code: ErasureErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
