import {
  type EditableAttributes,
  type IndexSpace,
  type TenantId,
  tenantOfSpace,
  tenantSpace,
} from '@kb/contracts';
import { createDatabase, createPool } from '@kb/database';
import { type Kysely, sql } from 'kysely';

import type { DB } from './db.generated';
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
  private readonly db: Kysely<DB>;
  /** The principals and attributes recorded per document: their own two tables. */
  private readonly access: PgRecordedAccess;

  constructor(options: { url: string; schema?: string; maxConnections?: number }) {
    this.db = createDatabase<DB>(
      createPool({
        url: options.url,
        schema: options.schema ?? INDEX_STATE_SCHEMA,
        maxConnections: options.maxConnections ?? 2,
        applicationName: 'document-index-state',
      }),
    );
    this.access = new PgRecordedAccess(this.db);
  }

  async tombstone(tenantId: TenantId, documentId: string): Promise<void> {
    await this.db
      .insertInto('tombstones')
      .values({ tenant_id: tenantId, document_id: documentId })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  async isTombstoned(tenantId: TenantId, documentId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('tombstones')
      .select('document_id')
      .where('tenant_id', '=', tenantId)
      .where('document_id', '=', documentId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Forgets one document; `forgetDocuments` does it for many, in one statement either way. */
  async forgetDocument(
    tenantId: TenantId,
    documentId: string,
    spaces: IndexSpace[],
  ): Promise<void> {
    await this.forgetDocuments(tenantId, [documentId], spaces);
  }

  // Bulk insert over unnest: one array parameter for a batch of thousands.
  async tombstoneMany(tenantId: TenantId, documentIds: string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await sql`
      INSERT INTO tombstones (tenant_id, document_id)
      SELECT ${tenantId}, id FROM unnest(${documentIds}::text[]) AS id
      ON CONFLICT DO NOTHING`.execute(this.db);
  }

  async spacesOfMany(
    tenantId: TenantId,
    documentIds: string[],
  ): Promise<Map<IndexSpace, string[]>> {
    const bySpace = new Map<IndexSpace, string[]>();
    if (documentIds.length === 0) return bySpace;
    bySpace.set(tenantSpace(tenantId), [...new Set(documentIds)]);
    const rows = await this.db
      .selectFrom('document_spaces')
      .select(['space', sql<string[]>`array_agg(DISTINCT document_id)`.as('ids')])
      .where('tenant_id', '=', tenantId)
      .where((eb) => eb('document_id', '=', eb.fn.any(eb.val(documentIds))))
      .where('space', '<>', tenantSpace(tenantId))
      .groupBy('space')
      .orderBy('space')
      .execute();
    for (const row of rows) bySpace.set(row.space, row.ids);
    return bySpace;
  }

  /** One statement: the principals, attributes, version claims and spaces of the documents go. */
  async forgetDocuments(
    tenantId: TenantId,
    documentIds: string[],
    spaces: IndexSpace[],
  ): Promise<void> {
    if (documentIds.length === 0) return;
    await this.db
      .with('principals', (db) =>
        db
          .deleteFrom('document_principals')
          .where('tenant_id', '=', tenantId)
          .where((eb) => eb('document_id', '=', eb.fn.any(eb.val(documentIds)))),
      )
      .with('attributes', (db) =>
        db
          .deleteFrom('document_attributes')
          .where('tenant_id', '=', tenantId)
          .where((eb) => eb('document_id', '=', eb.fn.any(eb.val(documentIds)))),
      )
      .with('versions', (db) =>
        db
          .deleteFrom('indexed_versions')
          .where((eb) => eb('tenant_id', '=', eb.fn.any(eb.val(spaces))))
          .where((eb) => eb('document_id', '=', eb.fn.any(eb.val(documentIds)))),
      )
      .deleteFrom('document_spaces')
      .where('tenant_id', '=', tenantId)
      .where((eb) => eb('document_id', '=', eb.fn.any(eb.val(documentIds))))
      .execute();
  }

  // Bulk insert over unnest, as tombstoneMany.
  async queueDerivedCleanup(tenantId: TenantId, documentIds: string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await sql`
      INSERT INTO derived_cleanup (tenant_id, document_id)
      SELECT ${tenantId}, id FROM unnest(${documentIds}::text[]) AS id
      ON CONFLICT DO NOTHING`.execute(this.db);
  }

  // A FOR UPDATE SKIP LOCKED lease claim: the builder would only obscure it.
  async claimDerivedCleanup(
    limit: number,
    leaseMs: number,
  ): Promise<Array<{ tenantId: TenantId; documentId: string }>> {
    const { rows } = await sql<{ tenant_id: TenantId; document_id: string }>`
      UPDATE derived_cleanup d SET claimed_until = now() + ${leaseMs} * interval '1 millisecond'
       WHERE (d.tenant_id, d.document_id) IN (
         SELECT tenant_id, document_id FROM derived_cleanup
          WHERE claimed_until IS NULL OR claimed_until < now()
          ORDER BY queued_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
       RETURNING d.tenant_id, d.document_id`.execute(this.db);
    return rows.map((row) => ({ tenantId: row.tenant_id, documentId: row.document_id }));
  }

  async derivedCleanupDone(tenantId: TenantId, documentIds: string[]): Promise<void> {
    if (documentIds.length === 0) return;
    await this.db
      .deleteFrom('derived_cleanup')
      .where('tenant_id', '=', tenantId)
      .where((eb) => eb('document_id', '=', eb.fn.any(eb.val(documentIds))))
      .execute();
  }

  // `indexed_versions.tenant_id` holds the space: the column predates pipelines.
  async claimVersion(space: IndexSpace, documentId: string, version: number): Promise<boolean> {
    const row = await this.db
      .insertInto('indexed_versions')
      .values({ tenant_id: space, document_id: documentId, version })
      .onConflict((oc) =>
        oc
          .columns(['tenant_id', 'document_id'])
          .doUpdateSet((eb) => ({ version: eb.ref('excluded.version') }))
          .where('indexed_versions.version', '<=', (eb) => eb.ref('excluded.version')),
      )
      .returning('version')
      .executeTakeFirst();
    return row !== undefined;
  }

  // Left joins from an unnest of the asked ids (a table function the builder cannot type).
  async indexStates(space: IndexSpace, documentIds: string[]): Promise<Map<string, SpaceState>> {
    const { rows } = await sql<{ document_id: string; version: number | null; deleted: boolean }>`
      SELECT d.document_id, v.version, t.document_id IS NOT NULL AS deleted
        FROM unnest(${documentIds}::text[]) AS d(document_id)
        LEFT JOIN indexed_versions v ON v.tenant_id = ${space} AND v.document_id = d.document_id
        LEFT JOIN tombstones t ON t.tenant_id = ${tenantOfSpace(space)}
                              AND t.document_id = d.document_id
       WHERE v.document_id IS NOT NULL OR t.document_id IS NOT NULL`.execute(this.db);
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
    await this.db
      .insertInto('document_spaces')
      .values({
        tenant_id: tenantId,
        document_id: documentId,
        space,
        version,
        chunk_count: chunkCount,
      })
      .onConflict((oc) =>
        oc
          .columns(['tenant_id', 'document_id', 'space'])
          .doUpdateSet((eb) => ({
            version: eb.ref('excluded.version'),
            chunk_count: eb.ref('excluded.chunk_count'),
          }))
          .where('document_spaces.version', '<=', (eb) => eb.ref('excluded.version')),
      )
      .execute();
    const rows = await this.db
      .selectFrom('document_spaces')
      .select(['space', 'chunk_count'])
      .where('tenant_id', '=', tenantId)
      .where('document_id', '=', documentId)
      .where('version', '>=', version)
      .execute();
    return new Map(rows.map((row) => [row.space, row.chunk_count]));
  }

  async reserveSpace(tenantId: TenantId, documentId: string, space: IndexSpace): Promise<void> {
    await this.db
      .insertInto('document_spaces')
      .values({ tenant_id: tenantId, document_id: documentId, space, version: 0, chunk_count: 0 })
      .onConflict((oc) => oc.columns(['tenant_id', 'document_id', 'space']).doNothing())
      .execute();
  }

  async spacesOf(tenantId: TenantId, documentId: string): Promise<IndexSpace[]> {
    const rows = await this.db
      .selectFrom('document_spaces')
      .select('space')
      .where('tenant_id', '=', tenantId)
      .where('document_id', '=', documentId)
      .execute();
    return [...new Set([tenantSpace(tenantId), ...rows.map((row) => row.space)])];
  }

  async forgetSpace(tenantId: TenantId, documentId: string, space: IndexSpace): Promise<void> {
    await this.db
      .deleteFrom('document_spaces')
      .where('tenant_id', '=', tenantId)
      .where('document_id', '=', documentId)
      .where('space', '=', space)
      .execute();
  }

  async allSpaces(): Promise<IndexSpace[]> {
    const rows = await this.db
      .selectFrom('document_spaces')
      .select('space')
      .distinct()
      .orderBy('space')
      .execute();
    return rows.map((row) => row.space);
  }

  // Bulk upsert over unnest, as tombstoneMany.
  async recordKnowledgeBaseSpace(
    tenantId: TenantId,
    knowledgeBaseIds: string[],
    space: IndexSpace,
    model: string,
  ): Promise<void> {
    if (knowledgeBaseIds.length === 0) return;
    await sql`
      INSERT INTO knowledge_base_spaces (tenant_id, knowledge_base_id, space, model)
      SELECT ${tenantId}, id, ${space}, ${model} FROM unnest(${knowledgeBaseIds}::text[]) AS id
      ON CONFLICT (tenant_id, knowledge_base_id) DO UPDATE
        SET space = EXCLUDED.space, model = EXCLUDED.model`.execute(this.db);
  }

  async knowledgeBaseSpaces(
    tenantId: TenantId,
    knowledgeBaseIds: string[],
  ): Promise<KnowledgeBaseSpace[]> {
    let query = this.db
      .selectFrom('knowledge_base_spaces')
      .select(['knowledge_base_id', 'space', 'model'])
      .where('tenant_id', '=', tenantId);
    if (knowledgeBaseIds.length > 0) {
      query = query.where((eb) =>
        eb('knowledge_base_id', '=', eb.fn.any(eb.val(knowledgeBaseIds))),
      );
    }
    const rows = await query.execute();
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
    await this.db.destroy();
  }
}
