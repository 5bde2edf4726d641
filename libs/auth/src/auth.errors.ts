import { DomainError, ErrorKind } from '@kb/errors';

export enum AuthErrorCode {
  Unauthenticated = 'unauthenticated',
  PermissionDenied = 'permission_denied',
  /** acl-service could not answer: callers fail closed, never open. */
  Unavailable = 'unavailable',
}

const KIND: Record<AuthErrorCode, ErrorKind> = {
  [AuthErrorCode.Unauthenticated]: ErrorKind.Unauthenticated,
  [AuthErrorCode.PermissionDenied]: ErrorKind.PermissionDenied,
  [AuthErrorCode.Unavailable]: ErrorKind.Unavailable,
};

/** Who is calling, or what they may do, could not be established or does not allow the call. */
export class AuthError extends DomainError<AuthErrorCode> {
  constructor(code: AuthErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
