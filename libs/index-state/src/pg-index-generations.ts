import type { TenantId } from '@kb/contracts';
import { createPool, quoteIdent } from '@kb/database';
import type { Pool } from 'pg';

import type { IndexGenerations } from './index-generations';
import { INDEX_STATE_SCHEMA } from './migrations';

/**
 * The generations in Postgres, beside the index they describe, so a cache outage cannot lose a
 * bump.
 */
export class PgIndexGenerations implements IndexGenerations {
  private readonly pool: Pool;
  private readonly table: string;

  constructor(options: { url: string; schema?: string; maxConnections?: number }) {
    const schema = options.schema ?? INDEX_STATE_SCHEMA;
    this.pool = createPool({
      url: options.url,
      schema,
      maxConnections: options.maxConnections ?? 2,
      applicationName: 'index-generations',
    });
    this.table = `${quoteIdent(schema)}.generations`;
  }

  async bump(tenantId: TenantId): Promise<number> {
    const { rows } = await this.pool.query<{ generation: string }>(
      `INSERT INTO ${this.table} (tenant_id, generation) VALUES ($1, 1)
       ON CONFLICT (tenant_id) DO UPDATE SET generation = ${this.table}.generation + 1
       RETURNING generation`,
      [tenantId],
    );
    return Number(rows[0]!.generation);
  }

  async current(tenantId: TenantId): Promise<number> {
    const { rows } = await this.pool.query<{ generation: string }>(
      `SELECT generation FROM ${this.table} WHERE tenant_id = $1`,
      [tenantId],
    );
    return Number(rows[0]?.generation ?? 0);
  }

  async tenants(): Promise<TenantId[]> {
    const { rows } = await this.pool.query<{ tenant_id: TenantId }>(
      `SELECT tenant_id FROM ${this.table} ORDER BY tenant_id`,
    );
    return rows.map((row) => row.tenant_id);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
