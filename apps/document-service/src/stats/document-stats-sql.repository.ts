import type { DocumentStatus, TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, sql } from 'kysely';

import type { Visibility } from '../documents/documents.repository';
import type { DocumentDatabase } from '../platform/db.types';
import { DB } from '../platform/tokens';
import {
  DocumentStatsRepository,
  type KnowledgeBaseStatusCount,
  type StatusCount,
  type ValueCount,
} from './document-stats.repository';

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

  async countInKnowledgeBases(
    tenantId: TenantId,
    visibility: Visibility,
    knowledgeBaseIds: string[],
  ): Promise<KnowledgeBaseStatusCount[]> {
    if (knowledgeBaseIds.length === 0) return [];
    const { rows } = await sql<CountRow & { bytes: string; last_indexed_at: Date | null }>`
      SELECT kb.id AS knowledge_base_id, d.status,
             count(*)::int AS documents, coalesce(sum(d.chunk_count), 0)::int AS chunks,
             coalesce(sum(d.size_bytes), 0)::text AS bytes,
             max((d.stage_times ->> 'indexed')::timestamptz) AS last_indexed_at
      FROM documents d CROSS JOIN LATERAL unnest(d.knowledge_base_ids) AS kb(id)
      WHERE d.tenant_id = ${tenantId} AND d.knowledge_base_ids && ${knowledgeBaseIds}::text[]
        AND kb.id = ANY(${knowledgeBaseIds}::text[]) AND ${visibleTo(visibility)}
      GROUP BY kb.id, d.status`.execute(this.db);
    return rows.map((row) => ({
      knowledgeBaseId: row.knowledge_base_id,
      status: row.status,
      documents: row.documents,
      chunks: row.chunks,
      bytes: Number(row.bytes),
      lastIndexedAt: row.last_indexed_at ? new Date(row.last_indexed_at).toISOString() : null,
    }));
  }

  async valuesOf(
    tenantId: TenantId,
    visibility: Visibility,
    knowledgeBaseId: string,
    field: { kind: 'tags' } | { kind: 'metadata'; key: string },
    limit: number,
  ): Promise<ValueCount[]> {
    // Each document counts once per distinct value it holds (a list holds each of its elements).
    const values =
      field.kind === 'tags'
        ? sql`SELECT DISTINCT d.id, to_jsonb(t) AS v FROM documents d, unnest(d.tags) AS t`
        : sql`SELECT DISTINCT d.id, e AS v FROM documents d,
                jsonb_array_elements(CASE jsonb_typeof(d.metadata -> ${field.key}::text)
                  WHEN 'array' THEN d.metadata -> ${field.key}::text
                  ELSE jsonb_build_array(d.metadata -> ${field.key}::text) END) AS e`;
    const { rows } = await sql<{ v: string | number | boolean; count: number }>`
      WITH held AS (${values}
        WHERE d.tenant_id = ${tenantId} AND d.knowledge_base_ids @> ARRAY[${knowledgeBaseId}]::text[]
          AND ${visibleTo(visibility)})
      SELECT v, count(*)::int AS count FROM held
      WHERE jsonb_typeof(v) IN ('string', 'number', 'boolean')
      GROUP BY v ORDER BY ${TYPE_ORDER}, v LIMIT ${limit}`.execute(this.db);
    return rows.map((row) => ({ value: row.v, count: row.count }));
  }
}

/** jsonb's own order, numbers before strings before booleans; readable as JS values. */
const TYPE_ORDER = sql`CASE jsonb_typeof(v) WHEN 'number' THEN 0 WHEN 'string' THEN 1 ELSE 2 END`;

/** The same rule as the documents repository's: principals overlap, or everything for admins. */
const visibleTo = (visibility: Visibility) =>
  visibility === 'all' ? sql<boolean>`true` : sql<boolean>`d.principals && ${visibility}::text[]`;
