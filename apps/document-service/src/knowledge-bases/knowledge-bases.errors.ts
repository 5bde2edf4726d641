import { DomainError, ErrorKind } from '@kb/errors';

export enum KnowledgeBaseErrorCode {
  NotFound = 'knowledge_base_not_found',
  PermissionDenied = 'permission_denied',
  ModelNotServed = 'embedding_model_not_served',
  /** A document names a knowledge base the tenant has not created. */
  UnknownKnowledgeBase = 'unknown_knowledge_base',
  Exists = 'knowledge_base_exists',
  /** Chunker or embedding model: fixed once a knowledge base is created. */
  ImmutableField = 'immutable_field',
  NotEmpty = 'knowledge_base_not_empty',
  InvalidCursor = 'invalid_cursor',
  /** `metadata-values` names no field, or one that is not `tags`, `metadata.<key>` or `<key>`. */
  InvalidField = 'invalid_field',
  /** embedding-service could not say which models it serves. */
  EmbeddingServiceUnavailable = 'embedding_service_unavailable',
  /** A legal hold names the knowledge base: it cannot be deleted until the hold is released. */
  LegalHold = 'legal_hold',
}

const KIND: Record<KnowledgeBaseErrorCode, ErrorKind> = {
  [KnowledgeBaseErrorCode.NotFound]: ErrorKind.NotFound,
  [KnowledgeBaseErrorCode.PermissionDenied]: ErrorKind.PermissionDenied,
  [KnowledgeBaseErrorCode.ModelNotServed]: ErrorKind.InvalidArgument,
  [KnowledgeBaseErrorCode.UnknownKnowledgeBase]: ErrorKind.InvalidArgument,
  [KnowledgeBaseErrorCode.Exists]: ErrorKind.AlreadyExists,
  [KnowledgeBaseErrorCode.ImmutableField]: ErrorKind.FailedPrecondition,
  [KnowledgeBaseErrorCode.NotEmpty]: ErrorKind.FailedPrecondition,
  [KnowledgeBaseErrorCode.InvalidCursor]: ErrorKind.InvalidArgument,
  [KnowledgeBaseErrorCode.InvalidField]: ErrorKind.InvalidArgument,
  [KnowledgeBaseErrorCode.EmbeddingServiceUnavailable]: ErrorKind.Unavailable,
  [KnowledgeBaseErrorCode.LegalHold]: ErrorKind.FailedPrecondition,
};

export class KnowledgeBaseError extends DomainError<KnowledgeBaseErrorCode> {
  constructor(code: KnowledgeBaseErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}

export const knowledgeBaseNotFound = (id: string): KnowledgeBaseError =>
  new KnowledgeBaseError(KnowledgeBaseErrorCode.NotFound, `knowledge base ${id} not found`);
