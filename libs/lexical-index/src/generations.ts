import { tenantOfSpace, type EditableAttributes } from '@kb/contracts';
import { createPool, quoteIdent } from '@kb/database';
import type { Pool } from 'pg';
import { LEXICAL_SCHEMA } from './migrations';

/**
 * Index bookkeeping per tenant. The index generation: a counter bumped after every change to what search can
 * return (a version indexed, a document deleted). Result caches put it in their keys, so a change
 * makes every older entry unreachable at once: no scan, no stale hit. It lives beside the index
 * it describes, in Postgres, so a cache outage cannot lose a bump.
 */
export class PgIndexGenerations {
  private readonly pool: Pool;
  private readonly table: string;
  private readonly tombstones: string;
  private readonly principals: string;
  private readonly attributes: string;
  private readonly versions: string;
  private readonly spaces: string;
  private readonly kbSpaces: string;

  constructor(options: { url: string; schema?: string; maxConnections?: number }) {
    const schema = options.schema ?? LEXICAL_SCHEMA;
    this.pool = createPool({
      url: options.url,
      schema,
      maxConnections: options.maxConnections ?? 2,
      applicationName: 'index-generations',
    });
    this.table = `${quoteIdent(schema)}.generations`;
    this.tombstones = `${quoteIdent(schema)}.tombstones`;
    this.principals = `${quoteIdent(schema)}.document_principals`;
    this.attributes = `${quoteIdent(schema)}.document_attributes`;
    this.versions = `${quoteIdent(schema)}.indexed_versions`;
    this.spaces = `${quoteIdent(schema)}.document_spaces`;
    this.kbSpaces = `${quoteIdent(schema)}.knowledge_base_spaces`;
  }

  /** Records that these knowledge bases' chunks are in `space`, embedded by `model`. */
  async recordKnowledgeBaseSpace(
    tenantId: string,
    knowledgeBaseIds: string[],
    space: string,
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

  /**
   * The index spaces (and their models) to search for these knowledge bases, or for all of the
   * tenant's when none is named. A knowledge base with nothing indexed yet has no row: it is
   * looked for in the tenant's own space, where it holds nothing either.
   */
  async knowledgeBaseSpaces(
    tenantId: string,
    knowledgeBaseIds: string[],
  ): Promise<Array<{ space: string; model: string | undefined }>> {
    const { rows } = await this.pool.query<{
      knowledge_base_id: string;
      space: string;
      model: string;
    }>(
      `SELECT knowledge_base_id, space, model FROM ${this.kbSpaces}
        WHERE tenant_id = $1 AND (cardinality($2::text[]) = 0 OR knowledge_base_id = ANY($2::text[]))`,
      [tenantId, knowledgeBaseIds],
    );
    const spaces = new Map<string, string | undefined>();
    const found = new Set(rows.map((row) => row.knowledge_base_id));
    if (knowledgeBaseIds.length === 0 || knowledgeBaseIds.some((id) => !found.has(id))) {
      spaces.set(tenantId, undefined);
    }
    for (const row of rows) {
      spaces.set(row.space, row.space === tenantId ? undefined : row.model);
    }
    return [...spaces].map(([space, model]) => ({ space, model }));
  }

  /**
   * Records that `space` holds `version` of a document with `chunkCount` chunks, and returns the
   * spaces holding that version (or a newer one) now, each with its chunk count.
   */
  async recordSpace(
    tenantId: string,
    documentId: string,
    space: string,
    version: number,
    chunkCount: number,
  ): Promise<Map<string, number>> {
    await this.pool.query(
      `INSERT INTO ${this.spaces} (tenant_id, document_id, space, version, chunk_count)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, document_id, space) DO UPDATE
         SET version = EXCLUDED.version, chunk_count = EXCLUDED.chunk_count
         WHERE ${this.spaces}.version <= EXCLUDED.version`,
      [tenantId, documentId, space, version, chunkCount],
    );
    const { rows } = await this.pool.query<{ space: string; chunk_count: number }>(
      `SELECT space, chunk_count FROM ${this.spaces}
        WHERE tenant_id = $1 AND document_id = $2 AND version >= $3`,
      [tenantId, documentId, version],
    );
    return new Map(rows.map((row) => [row.space, row.chunk_count]));
  }

  /** Every space holding the document; the tenant's own space always counts. */
  async spacesOf(tenantId: string, documentId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ space: string }>(
      `SELECT space FROM ${this.spaces} WHERE tenant_id = $1 AND document_id = $2`,
      [tenantId, documentId],
    );
    return [...new Set([tenantId, ...rows.map((row) => row.space)])];
  }

  async forgetSpace(tenantId: string, documentId: string, space: string): Promise<void> {
    await this.pool.query(
      `DELETE FROM ${this.spaces} WHERE tenant_id = $1 AND document_id = $2 AND space = $3`,
      [tenantId, documentId, space],
    );
  }

  /** Every index space: the tenants' own and the pipelines' (orphan sweep). */
  async allSpaces(): Promise<string[]> {
    const { rows } = await this.pool.query<{ space: string }>(
      `SELECT tenant_id AS space FROM ${this.table}
       UNION SELECT DISTINCT space FROM ${this.spaces} ORDER BY 1`,
    );
    return rows.map((row) => row.space);
  }

  async bump(tenantId: string): Promise<number> {
    const { rows } = await this.pool.query<{ generation: string }>(
      `INSERT INTO ${this.table} (tenant_id, generation) VALUES ($1, 1)
       ON CONFLICT (tenant_id) DO UPDATE SET generation = ${this.table}.generation + 1
       RETURNING generation`,
      [tenantId],
    );
    return Number(rows[0]!.generation);
  }

  async current(tenantId: string): Promise<number> {
    const { rows } = await this.pool.query<{ generation: string }>(
      `SELECT generation FROM ${this.table} WHERE tenant_id = $1`,
      [tenantId],
    );
    return Number(rows[0]?.generation ?? 0);
  }

  /** Records that a document was deleted; indexing it afterwards is refused. */
  async tombstone(tenantId: string, documentId: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.tombstones} (tenant_id, document_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
      [tenantId, documentId],
    );
  }

  async isTombstoned(tenantId: string, documentId: string): Promise<boolean> {
    const { rows } = await this.pool.query(
      `SELECT 1 FROM ${this.tombstones} WHERE tenant_id = $1 AND document_id = $2`,
      [tenantId, documentId],
    );
    return rows.length > 0;
  }

  /**
   * Claims an index space (a tenant's own, or a pipeline's) for `version` of a document: true when it is the newest seen so far (or
   * the same one again, a replay), false when a newer version was already indexed.
   */
  async claimVersion(space: string, documentId: string, version: number): Promise<boolean> {
    const { rows } = await this.pool.query(
      `INSERT INTO ${this.versions} (tenant_id, document_id, version) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id, document_id) DO UPDATE SET version = EXCLUDED.version
         WHERE ${this.versions}.version <= EXCLUDED.version
       RETURNING version`,
      [space, documentId, version],
    );
    return rows.length > 0;
  }

  /** Tenants that ever changed their indexes (each has a generation). */
  async tenants(): Promise<string[]> {
    const { rows } = await this.pool.query<{ tenant_id: string }>(
      `SELECT tenant_id FROM ${this.table} ORDER BY tenant_id`,
    );
    return rows.map((row) => row.tenant_id);
  }

  /**
   * What an index space should hold of these documents: the version claimed last in it, and
   * whether the document was deleted. A document absent from the map was never claimed nor deleted.
   */
  async indexStates(
    space: string,
    documentIds: string[],
  ): Promise<Map<string, { version?: number; deleted: boolean }>> {
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

  /** Records a document's latest ACL (see `principalsOf`). */
  async recordPrincipals(
    tenantId: string,
    documentId: string,
    principals: string[],
  ): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.principals} (tenant_id, document_id, principals) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id, document_id) DO UPDATE SET principals = EXCLUDED.principals`,
      [tenantId, documentId, principals],
    );
  }

  /** The document's ACL as last changed, or undefined when it never changed since upload. */
  async principalsOf(tenantId: string, documentId: string): Promise<string[] | undefined> {
    const { rows } = await this.pool.query<{ principals: string[] }>(
      `SELECT principals FROM ${this.principals} WHERE tenant_id = $1 AND document_id = $2`,
      [tenantId, documentId],
    );
    return rows[0]?.principals;
  }

  /** Records a document's latest editable attributes (see `attributesOf`). */
  async recordAttributes(
    tenantId: string,
    documentId: string,
    attributes: EditableAttributes,
  ): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.attributes} (tenant_id, document_id, attributes) VALUES ($1, $2, $3::jsonb)
       ON CONFLICT (tenant_id, document_id) DO UPDATE SET attributes = EXCLUDED.attributes`,
      [tenantId, documentId, JSON.stringify(attributes)],
    );
  }

  /** The attributes as last edited, or undefined when the document was not edited since upload. */
  async attributesOf(
    tenantId: string,
    documentId: string,
  ): Promise<EditableAttributes | undefined> {
    const { rows } = await this.pool.query<{ attributes: EditableAttributes }>(
      `SELECT attributes FROM ${this.attributes} WHERE tenant_id = $1 AND document_id = $2`,
      [tenantId, documentId],
    );
    return rows[0]?.attributes;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
