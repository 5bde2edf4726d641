import { DomainError, ErrorKind } from '@kb/errors';

export enum LegalHoldErrorCode {
  NotFound = 'hold_not_found',
  /** Placing, listing and releasing holds is for tenant admins. */
  PermissionDenied = 'permission_denied',
  /** A filter hold's `where` is not a filter of the listing language (docs/adr/0007). */
  InvalidFilter = 'invalid_filter',
  /** The hold was released already; a release is final. */
  AlreadyReleased = 'hold_released',
}

const KIND: Record<LegalHoldErrorCode, ErrorKind> = {
  [LegalHoldErrorCode.NotFound]: ErrorKind.NotFound,
  [LegalHoldErrorCode.PermissionDenied]: ErrorKind.PermissionDenied,
  [LegalHoldErrorCode.InvalidFilter]: ErrorKind.InvalidArgument,
  [LegalHoldErrorCode.AlreadyReleased]: ErrorKind.FailedPrecondition,
};

export class LegalHoldError extends DomainError<LegalHoldErrorCode> {
  constructor(code: LegalHoldErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
