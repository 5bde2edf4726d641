import { DomainError, ErrorKind } from '@kb/errors';

export enum RetentionErrorCode {
  NotFound = 'knowledge_base_not_found',
  /** Retention previews are for tenant admins. */
  PermissionDenied = 'permission_denied',
}

const KIND: Record<RetentionErrorCode, ErrorKind> = {
  [RetentionErrorCode.NotFound]: ErrorKind.NotFound,
  [RetentionErrorCode.PermissionDenied]: ErrorKind.PermissionDenied,
};

export class RetentionError extends DomainError<RetentionErrorCode> {
  constructor(code: RetentionErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
