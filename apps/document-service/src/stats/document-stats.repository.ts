import type { DocumentStatus, TenantId } from '@kb/contracts';

import type { Visibility } from '../documents/documents.repository';

/** Documents of one status in one knowledge base, and the chunks they were split into. */
export interface StatusCount {
  knowledgeBaseId: string;
  status: DocumentStatus;
  documents: number;
  chunks: number;
}

/** One knowledge base's documents of one status: how many, their chunks, bytes, last indexing. */
export interface KnowledgeBaseStatusCount extends StatusCount {
  bytes: number;
  /** The latest time one of them reached `indexed` (ISO 8601), or null. */
  lastIndexedAt: string | null;
}

/** A distinct value of a field and how many documents hold it. */
export interface ValueCount {
  value: string | number | boolean;
  count: number;
}

/** Counts over `documents` for `GET /v1/stats` (SQL in Postgres; in memory in unit tests). */
export abstract class DocumentStatsRepository {
  /** Per knowledge base and status, over the documents `visibility` may read. */
  abstract countByKnowledgeBase(tenantId: TenantId, visibility: Visibility): Promise<StatusCount[]>;
  /** Per status over the same documents, each counted once whatever its knowledge bases. */
  abstract countByStatus(
    tenantId: TenantId,
    visibility: Visibility,
  ): Promise<Array<Omit<StatusCount, 'knowledgeBaseId'>>>;
  /** Per status in each of `knowledgeBaseIds`, over the documents `visibility` may read. */
  abstract countInKnowledgeBases(
    tenantId: TenantId,
    visibility: Visibility,
    knowledgeBaseIds: string[],
  ): Promise<KnowledgeBaseStatusCount[]>;
  /**
   * The distinct values of a metadata key (each element of a list counts) or of `tags` among the
   * documents of a knowledge base `visibility` may read, sorted (numbers, then strings, then
   * booleans), the first `limit`.
   */
  abstract valuesOf(
    tenantId: TenantId,
    visibility: Visibility,
    knowledgeBaseId: string,
    field: { kind: 'tags' } | { kind: 'metadata'; key: string },
    limit: number,
  ): Promise<ValueCount[]>;
}
