import { DomainError, ErrorKind } from '@kb/errors';

export enum DocumentErrorCode {
  NotFound = 'document_not_found',
  EmptyFile = 'empty_file',
  MissingFile = 'missing_file',
  InvalidMetadata = 'invalid_metadata',
  InvalidCursor = 'invalid_cursor',
  /** `where` is not JSON, or not a filter of the language (docs/adr/0007, 0024). */
  InvalidFilter = 'invalid_filter',
  PermissionDenied = 'permission_denied',
  /** A concurrent upload (of a document the caller can read) took this external id first; retry. */
  ExternalIdTaken = 'external_id_taken',
  /**
   * The external id cannot be used by this caller. Deliberately says no more: it is also the
   * answer when a document the caller cannot read holds the id (review N13, docs/adr/0032).
   */
  InvalidExternalId = 'invalid_external_id',
  /** `source:` external ids belong to source syncs (ADR 26, 31); uploads and edits may not use them. */
  ExternalIdReserved = 'external_id_reserved',
  /** A pre-computed chunk without an embedding, or with one of another dimension. */
  InvalidChunk = 'invalid_chunk',
  /** A pre-computed document cannot go through another pipeline (it has no original to parse). */
  PrecomputedPipeline = 'precomputed_pipeline',
  /** A legal hold covers the document: nobody may delete it until the hold is released (ADR 52). */
  LegalHold = 'legal_hold',
  /** An ACL whose `until` names an end already passed (docs/adr/0054). */
  InvalidAcl = 'invalid_acl',
}

const KIND: Record<DocumentErrorCode, ErrorKind> = {
  [DocumentErrorCode.NotFound]: ErrorKind.NotFound,
  [DocumentErrorCode.EmptyFile]: ErrorKind.InvalidArgument,
  [DocumentErrorCode.MissingFile]: ErrorKind.InvalidArgument,
  [DocumentErrorCode.InvalidMetadata]: ErrorKind.InvalidArgument,
  [DocumentErrorCode.InvalidCursor]: ErrorKind.InvalidArgument,
  [DocumentErrorCode.InvalidFilter]: ErrorKind.InvalidArgument,
  [DocumentErrorCode.PermissionDenied]: ErrorKind.PermissionDenied,
  [DocumentErrorCode.ExternalIdTaken]: ErrorKind.AlreadyExists,
  [DocumentErrorCode.InvalidExternalId]: ErrorKind.InvalidArgument,
  [DocumentErrorCode.ExternalIdReserved]: ErrorKind.InvalidArgument,
  [DocumentErrorCode.InvalidChunk]: ErrorKind.InvalidArgument,
  [DocumentErrorCode.PrecomputedPipeline]: ErrorKind.FailedPrecondition,
  [DocumentErrorCode.LegalHold]: ErrorKind.FailedPrecondition,
  [DocumentErrorCode.InvalidAcl]: ErrorKind.InvalidArgument,
};

export class DocumentError extends DomainError<DocumentErrorCode> {
  constructor(code: DocumentErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}
