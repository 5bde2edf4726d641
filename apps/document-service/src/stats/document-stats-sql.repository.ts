import type { DocumentStatus, TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, sql } from 'kysely';

import type { Visibility } from '../documents/documents.repository';
import type { DocumentDatabase } from '../platform/db.types';
import { DB } from '../platform/tokens';
import { DocumentStatsRepository, type StatusCount } from './document-stats.repository';

interface CountRow {
  knowledge_base_id: string;
  status: DocumentStatus;
  documents: number;
  chunks: number;
}

/** Reads `documents` only; one grouped scan of the tenant's rows per call. */
@Injectable()
export class SqlDocumentStatsRepository extends DocumentStatsRepository {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {
    super();
  }

  async countByKnowledgeBase(tenantId: TenantId, visibility: Visibility): Promise<StatusCount[]> {
    const { rows } = await sql<CountRow>`
      SELECT kb.id AS knowledge_base_id, d.status,
             count(*)::int AS documents, coalesce(sum(d.chunk_count), 0)::int AS chunks
      FROM documents d CROSS JOIN LATERAL unnest(d.knowledge_base_ids) AS kb(id)
      WHERE d.tenant_id = ${tenantId} AND ${visibleTo(visibility)}
      GROUP BY kb.id, d.status
      ORDER BY kb.id, d.status`.execute(this.db);
    return rows.map((row) => ({
      knowledgeBaseId: row.knowledge_base_id,
      status: row.status,
      documents: row.documents,
      chunks: row.chunks,
    }));
  }

  async countByStatus(
    tenantId: TenantId,
    visibility: Visibility,
  ): Promise<Array<Omit<StatusCount, 'knowledgeBaseId'>>> {
    const { rows } = await sql<Omit<CountRow, 'knowledge_base_id'>>`
      SELECT d.status, count(*)::int AS documents, coalesce(sum(d.chunk_count), 0)::int AS chunks
      FROM documents d
      WHERE d.tenant_id = ${tenantId} AND ${visibleTo(visibility)}
      GROUP BY d.status
      ORDER BY d.status`.execute(this.db);
    return rows;
  }
}

/** The same rule as the documents repository's: principals overlap, or everything for admins. */
const visibleTo = (visibility: Visibility) =>
  visibility === 'all' ? sql<boolean>`true` : sql<boolean>`d.principals && ${visibility}::text[]`;
