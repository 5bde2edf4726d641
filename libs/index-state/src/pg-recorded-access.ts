import type { EditableAttributes, TenantId } from '@kb/contracts';
import type { Pool } from 'pg';

import type { RecordedAccess } from './document-index-state';

/**
 * The part of `PgDocumentIndexState` that records a document's principals and editable
 * attributes, each with the version that set them, so a late event cannot undo a newer one.
 */
export class PgRecordedAccess {
  constructor(
    private readonly pool: Pool,
    private readonly principals: string,
    private readonly attributes: string,
  ) {}

  // A new row is not applied yet (-1); a stale version changes nothing and returns no row.
  async recordPrincipals(
    tenantId: TenantId,
    documentId: string,
    principals: string[],
    version?: number,
  ): Promise<boolean> {
    const { rows } = await this.pool.query(
      `INSERT INTO ${this.principals} AS p (tenant_id, document_id, principals, version, applied_version)
       VALUES ($1, $2, $3, COALESCE($4::integer, 0), -1)
       ON CONFLICT (tenant_id, document_id) DO UPDATE
         SET principals = EXCLUDED.principals, version = GREATEST(p.version, EXCLUDED.version)
         WHERE $4::integer IS NULL OR p.version <= $4::integer
       RETURNING 1`,
      [tenantId, documentId, principals, version ?? null],
    );
    return rows.length > 0;
  }

  async markPrincipalsApplied(
    tenantId: TenantId,
    documentId: string,
    version?: number,
  ): Promise<void> {
    await this.pool.query(
      `UPDATE ${this.principals} SET applied_version = version
        WHERE tenant_id = $1 AND document_id = $2 AND ($3::integer IS NULL OR version = $3::integer)`,
      [tenantId, documentId, version ?? null],
    );
  }

  async accessStates(
    tenantId: TenantId,
    documentIds: string[],
  ): Promise<Map<string, RecordedAccess>> {
    const { rows } = await this.pool.query<{
      document_id: string;
      principals: string[];
      version: number;
      applied_version: number;
    }>(
      `SELECT document_id, principals, version, applied_version FROM ${this.principals}
        WHERE tenant_id = $1 AND document_id = ANY($2::text[])`,
      [tenantId, documentIds],
    );
    return new Map(
      rows.map((row) => [
        row.document_id,
        {
          principals: row.principals,
          version: row.version,
          applied: row.applied_version === row.version,
        },
      ]),
    );
  }

  async principalsOf(tenantId: TenantId, documentId: string): Promise<string[] | undefined> {
    const { rows } = await this.pool.query<{ principals: string[] }>(
      `SELECT principals FROM ${this.principals} WHERE tenant_id = $1 AND document_id = $2`,
      [tenantId, documentId],
    );
    return rows[0]?.principals;
  }

  async recordAttributes(
    tenantId: TenantId,
    documentId: string,
    attributes: EditableAttributes,
    version?: number,
  ): Promise<boolean> {
    const { rows } = await this.pool.query(
      `INSERT INTO ${this.attributes} AS a (tenant_id, document_id, attributes, version)
       VALUES ($1, $2, $3::jsonb, COALESCE($4::integer, 0))
       ON CONFLICT (tenant_id, document_id) DO UPDATE
         SET attributes = EXCLUDED.attributes, version = GREATEST(a.version, EXCLUDED.version)
         WHERE $4::integer IS NULL OR a.version <= $4::integer
       RETURNING 1`,
      [tenantId, documentId, JSON.stringify(attributes), version ?? null],
    );
    return rows.length > 0;
  }

  async attributesOf(
    tenantId: TenantId,
    documentId: string,
  ): Promise<EditableAttributes | undefined> {
    const { rows } = await this.pool.query<{ attributes: EditableAttributes }>(
      `SELECT attributes FROM ${this.attributes} WHERE tenant_id = $1 AND document_id = $2`,
      [tenantId, documentId],
    );
    return rows[0]?.attributes;
  }
}
