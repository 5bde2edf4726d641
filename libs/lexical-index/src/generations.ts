import type { EditableAttributes } from '@kb/contracts';
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
   * Claims the indexes for `version` of a document: true when it is the newest seen so far (or
   * the same one again, a replay), false when a newer version was already indexed.
   */
  async claimVersion(tenantId: string, documentId: string, version: number): Promise<boolean> {
    const { rows } = await this.pool.query(
      `INSERT INTO ${this.versions} (tenant_id, document_id, version) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id, document_id) DO UPDATE SET version = EXCLUDED.version
         WHERE ${this.versions}.version <= EXCLUDED.version
       RETURNING version`,
      [tenantId, documentId, version],
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
   * What the indexes should hold of these documents: the version claimed last, and whether the
   * document was deleted. A document absent from the map was never claimed nor deleted.
   */
  async indexStates(
    tenantId: string,
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
         LEFT JOIN ${this.tombstones} t ON t.tenant_id = $1 AND t.document_id = d.document_id
        WHERE v.document_id IS NOT NULL OR t.document_id IS NOT NULL`,
      [tenantId, documentIds],
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
