import { DomainError, ErrorKind } from '@kb/errors';

export enum RepairErrorCode {
  /** Only a tenant admin may send the tenant's documents through the pipelines again. */
  PermissionDenied = 'permission_denied',
}

const KIND: Record<RepairErrorCode, ErrorKind> = {
  [RepairErrorCode.PermissionDenied]: ErrorKind.PermissionDenied,
};

export class RepairError extends DomainError<RepairErrorCode> {
  constructor(code: RepairErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
