import { DomainError, ErrorKind } from '@kb/errors';

export enum DocumentContentErrorCode {
  /** The version's extracted text is not stored (not parsed yet, failed, or parsed before texts were kept). */
  TextNotAvailable = 'text_not_available',
  /** A version the document never had. */
  VersionNotFound = 'document_version_not_found',
  /** A text stored whole before texts were stored in windows, too large to read at once (N6). */
  TextTooLarge = 'text_too_large',
}

const KIND: Record<DocumentContentErrorCode, ErrorKind> = {
  [DocumentContentErrorCode.TextNotAvailable]: ErrorKind.FailedPrecondition,
  [DocumentContentErrorCode.VersionNotFound]: ErrorKind.NotFound,
  [DocumentContentErrorCode.TextTooLarge]: ErrorKind.FailedPrecondition,
};

export class DocumentContentError extends DomainError<DocumentContentErrorCode> {
  constructor(code: DocumentContentErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
