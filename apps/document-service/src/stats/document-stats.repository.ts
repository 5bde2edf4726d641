import type { DocumentStatus, TenantId } from '@kb/contracts';

import type { Visibility } from '../documents/documents.repository';

/** Documents of one status in one knowledge base, and the chunks they were split into. */
export interface StatusCount {
  knowledgeBaseId: string;
  status: DocumentStatus;
  documents: number;
  chunks: number;
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
}
