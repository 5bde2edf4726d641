import { DomainError, ErrorKind } from './domain-error';

/** The limits a tenant admin (or the deployment) may set, per tenant or per knowledge base. */
export type QuotaName = 'documents' | 'bytes' | 'knowledgeBases' | 'searchesPerDay';

/** What a refused call is told, as `error.details`: which limit, its value and the current use. */
export interface QuotaDetails {
  quota: QuotaName;
  limit: number;
  used: number;
  /** Set when the limit is a knowledge base's, not the tenant's. */
  knowledgeBaseId?: string;
}

/**
 * 403 `quota_exceeded` for a stored-size limit (documents, bytes, knowledge bases: the caller must
 * delete something first), 429 for a daily one (searches: `Retry-After` is the next UTC midnight).
 * Raised before any work is done (docs/adr/0053).
 */
export class QuotaExceededError extends DomainError<'quota_exceeded'> {
  constructor(details: QuotaDetails, retryAfterSeconds?: number) {
    const scope = details.knowledgeBaseId ? `knowledge base ${details.knowledgeBaseId}` : 'tenant';
    super(
      'quota_exceeded',
      retryAfterSeconds === undefined ? ErrorKind.PermissionDenied : ErrorKind.ResourceExhausted,
      `the ${scope}'s ${details.quota} quota of ${details.limit} is reached (${details.used} used)`,
      details,
      retryAfterSeconds === undefined ? {} : { retryAfterSeconds },
    );
  }
}
