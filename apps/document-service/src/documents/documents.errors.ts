import { ApiError } from '@kb/http';

export enum DocumentErrorCode {
  NotFound = 'document_not_found',
  EmptyFile = 'empty_file',
  MissingFile = 'missing_file',
  InvalidMetadata = 'invalid_metadata',
  InvalidCursor = 'invalid_cursor',
  PermissionDenied = 'permission_denied',
}

const STATUS: Record<DocumentErrorCode, number> = {
  [DocumentErrorCode.NotFound]: 404,
  [DocumentErrorCode.EmptyFile]: 400,
  [DocumentErrorCode.MissingFile]: 400,
  [DocumentErrorCode.InvalidMetadata]: 400,
  [DocumentErrorCode.InvalidCursor]: 400,
  [DocumentErrorCode.PermissionDenied]: 403,
};

export class DocumentError extends ApiError {
  constructor(code: DocumentErrorCode, message: string) {
    super(STATUS[code], code, message);
  }
}
