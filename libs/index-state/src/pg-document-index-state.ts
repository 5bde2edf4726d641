import {
  type EditableAttributes,
  type IndexSpace,
  type TenantId,
  tenantOfSpace,
  tenantSpace,
} from '@kb/contracts';
import { createPool, quoteIdent } from '@kb/database';
import type { Pool } from 'pg';

import {
  type DocumentIndexState,
  type KnowledgeBaseSpace,
  type RecordedAccess,
  type SpaceState,
  spacesToSearch,
} from './document-index-state';
import { INDEX_STATE_SCHEMA } from './migrations';
import { PgRecordedAccess } from './pg-recorded-access';

/** The document index state in Postgres: six small tables keyed by tenant (or space) and document. */
export class PgDocumentIndexState implements DocumentIndexState {
  private readonly pool: Pool;
  private readonly tombstones: string;
  private readonly principals: string;
  private readonly attributes: string;
  private readonly versions: string;
  private readonly spaces: string;
  private readonly kbSpaces: string;
  private readonly derivedCleanup: string;
  /** The principals and attributes recorded per document: their own two tables. */
  private readonly access: PgRecordedAccess;

  constructor(options: { url: string; schema?: string; maxConnections?: number }) {
    const schema = options.schema ?? INDEX_STATE_SCHEMA;
    this.pool = createPool({
      url: options.url,
      schema,
      maxConnections: options.maxConnections ?? 2,
      applicationName: 'document-index-state',
    });
    this.tombstones = `${quoteIdent(schema)}.tombstones`;
    this.principals = `${quoteIdent(schema)}.document_principals`;
    this.attributes = `${quoteIdent(schema)}.document_attributes`;
    this.versions = `${quoteIdent(schema)}.indexed_versions`;
    this.spaces = `${quoteIdent(schema)}.document_spaces`;
    this.kbSpaces = `${quoteIdent(schema)}.knowledge_base_spaces`;
    this.derivedCleanup = `${quoteIdent(schema)}.derived_cleanup`;
    this.access = new PgRecordedAccess(this.pool, this.principals, this.attributes);
  }

  async tombstone(tenantId: TenantId, documentId: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.tombstones} (tenant_id, document_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
      [tenantId, documentId],
    );
  }

  async isTombstoned(tenantId: TenantId, documentId: string): Promise<boolean> {
    const { rows } = await this.pool.query(
      `SELECT 1 FROM ${this.tombstones} WHERE tenant_id = $1 AND document_id = $2`,
      [tenantId, documentId],
    );
    return rows.length > 0;
  }

  async forgetDocument(
    tenantId: TenantId,
    documentId: string,
    spaces: IndexSpace[],
  ): Promise<void> {
    await this.pool.query(
      `WITH principals AS (
         DELETE FROM ${this.principals} WHERE tenant_id = $1 AND document_id = $2
       ), attributes AS (
         DELETE FROM ${this.attributes} WHERE tenant_id = $1 AND document_id = $2
       ), versions AS (
         DELETE FROM ${this.versions} WHERE tenant_id = ANY($3::text[]) AND document_id = $2
       )
       DELETE FROM ${this.spaces} WHERE tenant_id = $1 AND document_id = $2`,
      [tenantId, documentId, spaces],
    );
  }

  async tombstoneMany(tenantId: TenantId, documentIds: string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await this.pool.query(
      `INSERT INTO ${this.tombstones} (tenant_id, document_id)
       SELECT $1, id FROM unnest($2::text[]) AS id ON CONFLICT DO NOTHING`,
      [tenantId, documentIds],
    );
  }

  async spacesOfMany(
    tenantId: TenantId,
    documentIds: string[],
  ): Promise<Map<IndexSpace, string[]>> {
    const bySpace = new Map<IndexSpace, string[]>();
    if (documentIds.length === 0) return bySpace;
    bySpace.set(tenantSpace(tenantId), [...new Set(documentIds)]);
    const { rows } = await this.pool.query<{ space: IndexSpace; ids: string[] }>(
      `SELECT space, array_agg(DISTINCT document_id) AS ids FROM ${this.spaces}
        WHERE tenant_id = $1 AND document_id = ANY($2::text[]) AND space <> $3
        GROUP BY space ORDER BY space`,
      [tenantId, documentIds, tenantSpace(tenantId)],
    );
    for (const row of rows) bySpace.set(row.space, row.ids);
    return bySpace;
  }

  async forgetDocuments(
    tenantId: TenantId,
    documentIds: string[],
    spaces: IndexSpace[],
  ): Promise<void> {
    if (documentIds.length === 0) return;
    await this.pool.query(
      `WITH principals AS (
         DELETE FROM ${this.principals} WHERE tenant_id = $1 AND document_id = ANY($2::text[])
       ), attributes AS (
         DELETE FROM ${this.attributes} WHERE tenant_id = $1 AND document_id = ANY($2::text[])
       ), versions AS (
         DELETE FROM ${this.versions} WHERE tenant_id = ANY($3::text[]) AND document_id = ANY($2::text[])
       )
       DELETE FROM ${this.spaces} WHERE tenant_id = $1 AND document_id = ANY($2::text[])`,
      [tenantId, documentIds, spaces],
    );
  }

  async queueDerivedCleanup(tenantId: TenantId, documentIds: string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await this.pool.query(
      `INSERT INTO ${this.derivedCleanup} (tenant_id, document_id)
       SELECT $1, id FROM unnest($2::text[]) AS id ON CONFLICT DO NOTHING`,
      [tenantId, documentIds],
    );
  }

  async claimDerivedCleanup(
    limit: number,
    leaseMs: number,
  ): Promise<Array<{ tenantId: TenantId; documentId: string }>> {
    const { rows } = await this.pool.query<{ tenant_id: TenantId; document_id: string }>(
      `UPDATE ${this.derivedCleanup} d SET claimed_until = now() + $2 * interval '1 millisecond'
        WHERE (d.tenant_id, d.document_id) IN (
          SELECT tenant_id, document_id FROM ${this.derivedCleanup}
           WHERE claimed_until IS NULL OR claimed_until < now()
           ORDER BY queued_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING d.tenant_id, d.document_id`,
      [limit, leaseMs],
    );
    return rows.map((row) => ({ tenantId: row.tenant_id, documentId: row.document_id }));
  }

  async derivedCleanupDone(tenantId: TenantId, documentIds: string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await this.pool.query(
      `DELETE FROM ${this.derivedCleanup} WHERE tenant_id = $1 AND document_id = ANY($2::text[])`,
      [tenantId, documentIds],
    );
  }

  // `indexed_versions.tenant_id` holds the space: the column predates pipelines.
  async claimVersion(space: IndexSpace, documentId: string, version: number): Promise<boolean> {
    const { rows } = await this.pool.query(
      `INSERT INTO ${this.versions} (tenant_id, document_id, version) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id, document_id) DO UPDATE SET version = EXCLUDED.version
         WHERE ${this.versions}.version <= EXCLUDED.version
       RETURNING version`,
      [space, documentId, version],
    );
    return rows.length > 0;
  }

  async indexStates(space: IndexSpace, documentIds: string[]): Promise<Map<string, SpaceState>> {
    const { rows } = await this.pool.query<{
      document_id: string;
      version: number | null;
      deleted: boolean;
    }>(
      `SELECT d.document_id, v.version, t.document_id IS NOT NULL AS deleted
         FROM unnest($2::text[]) AS d(document_id)
         LEFT JOIN ${this.versions} v ON v.tenant_id = $1 AND v.document_id = d.document_id
         LEFT JOIN ${this.tombstones} t ON t.tenant_id = $3 AND t.document_id = d.document_id
        WHERE v.document_id IS NOT NULL OR t.document_id IS NOT NULL`,
      [space, documentIds, tenantOfSpace(space)],
    );
    return new Map(
      rows.map((row) => [
        row.document_id,
        { ...(row.version === null ? {} : { version: row.version }), deleted: row.deleted },
      ]),
    );
  }

  async recordSpace(
    tenantId: TenantId,
    documentId: string,
    space: IndexSpace,
    version: number,
    chunkCount: number,
  ): Promise<Map<IndexSpace, number>> {
    await this.pool.query(
      `INSERT INTO ${this.spaces} (tenant_id, document_id, space, version, chunk_count)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, document_id, space) DO UPDATE
         SET version = EXCLUDED.version, chunk_count = EXCLUDED.chunk_count
         WHERE ${this.spaces}.version <= EXCLUDED.version`,
      [tenantId, documentId, space, version, chunkCount],
    );
    const { rows } = await this.pool.query<{ space: IndexSpace; chunk_count: number }>(
      `SELECT space, chunk_count FROM ${this.spaces}
        WHERE tenant_id = $1 AND document_id = $2 AND version >= $3`,
      [tenantId, documentId, version],
    );
    return new Map(rows.map((row) => [row.space, row.chunk_count]));
  }

  async reserveSpace(tenantId: TenantId, documentId: string, space: IndexSpace): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.spaces} (tenant_id, document_id, space, version, chunk_count)
       VALUES ($1, $2, $3, 0, 0) ON CONFLICT (tenant_id, document_id, space) DO NOTHING`,
      [tenantId, documentId, space],
    );
  }

  async spacesOf(tenantId: TenantId, documentId: string): Promise<IndexSpace[]> {
    const { rows } = await this.pool.query<{ space: IndexSpace }>(
      `SELECT space FROM ${this.spaces} WHERE tenant_id = $1 AND document_id = $2`,
      [tenantId, documentId],
    );
    return [...new Set([tenantSpace(tenantId), ...rows.map((row) => row.space)])];
  }

  async forgetSpace(tenantId: TenantId, documentId: string, space: IndexSpace): Promise<void> {
    await this.pool.query(
      `DELETE FROM ${this.spaces} WHERE tenant_id = $1 AND document_id = $2 AND space = $3`,
      [tenantId, documentId, space],
    );
  }

  async allSpaces(): Promise<IndexSpace[]> {
    const { rows } = await this.pool.query<{ space: IndexSpace }>(
      `SELECT DISTINCT space FROM ${this.spaces} ORDER BY space`,
    );
    return rows.map((row) => row.space);
  }

  async recordKnowledgeBaseSpace(
    tenantId: TenantId,
    knowledgeBaseIds: string[],
    space: IndexSpace,
    model: string,
  ): Promise<void> {
    if (knowledgeBaseIds.length === 0) return;
    await this.pool.query(
      `INSERT INTO ${this.kbSpaces} (tenant_id, knowledge_base_id, space, model)
       SELECT $1, id, $3, $4 FROM unnest($2::text[]) AS id
       ON CONFLICT (tenant_id, knowledge_base_id) DO UPDATE
         SET space = EXCLUDED.space, model = EXCLUDED.model`,
      [tenantId, knowledgeBaseIds, space, model],
    );
  }

  async knowledgeBaseSpaces(
    tenantId: TenantId,
    knowledgeBaseIds: string[],
  ): Promise<KnowledgeBaseSpace[]> {
    const { rows } = await this.pool.query<{
      knowledge_base_id: string;
      space: IndexSpace;
      model: string;
    }>(
      `SELECT knowledge_base_id, space, model FROM ${this.kbSpaces}
        WHERE tenant_id = $1 AND (cardinality($2::text[]) = 0 OR knowledge_base_id = ANY($2::text[]))`,
      [tenantId, knowledgeBaseIds],
    );
    return spacesToSearch(
      tenantId,
      knowledgeBaseIds,
      rows.map((row) => ({
        knowledgeBaseId: row.knowledge_base_id,
        space: row.space,
        model: row.model,
      })),
    );
  }

  recordPrincipals(
    tenantId: TenantId,
    documentId: string,
    principals: string[],
    version?: number,
  ): Promise<boolean> {
    return this.access.recordPrincipals(tenantId, documentId, principals, version);
  }

  markPrincipalsApplied(tenantId: TenantId, documentId: string, version?: number): Promise<void> {
    return this.access.markPrincipalsApplied(tenantId, documentId, version);
  }

  accessStates(tenantId: TenantId, documentIds: string[]): Promise<Map<string, RecordedAccess>> {
    return this.access.accessStates(tenantId, documentIds);
  }

  principalsOf(tenantId: TenantId, documentId: string): Promise<string[] | undefined> {
    return this.access.principalsOf(tenantId, documentId);
  }

  recordAttributes(
    tenantId: TenantId,
    documentId: string,
    attributes: EditableAttributes,
    version?: number,
  ): Promise<boolean> {
    return this.access.recordAttributes(tenantId, documentId, attributes, version);
  }

  attributesOf(tenantId: TenantId, documentId: string): Promise<EditableAttributes | undefined> {
    return this.access.attributesOf(tenantId, documentId);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
