import type { TenantId } from '@kb/contracts';
import { createDatabase, createPool } from '@kb/database';
import type { Kysely } from 'kysely';

import type { DB } from './db.generated';
import type { IndexGenerations } from './index-generations';
import { INDEX_STATE_SCHEMA } from './migrations';

/**
 * The generations in Postgres, beside the index they describe, so a cache outage cannot lose a
 * bump.
 */
export class PgIndexGenerations implements IndexGenerations {
  private readonly db: Kysely<DB>;

  constructor(options: { url: string; schema?: string; maxConnections?: number }) {
    this.db = createDatabase<DB>(
      createPool({
        url: options.url,
        schema: options.schema ?? INDEX_STATE_SCHEMA,
        maxConnections: options.maxConnections ?? 2,
        applicationName: 'index-generations',
      }),
    );
  }

  async bump(tenantId: TenantId): Promise<number> {
    const row = await this.db
      .insertInto('generations')
      .values({ tenant_id: tenantId, generation: 1 })
      .onConflict((oc) =>
        oc
          .column('tenant_id')
          .doUpdateSet({ generation: (eb) => eb('generations.generation', '+', 1) }),
      )
      .returning('generation')
      .executeTakeFirstOrThrow();
    return Number(row.generation);
  }

  async current(tenantId: TenantId): Promise<number> {
    const row = await this.db
      .selectFrom('generations')
      .select('generation')
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return Number(row?.generation ?? 0);
  }

  async tenants(): Promise<TenantId[]> {
    const rows = await this.db
      .selectFrom('generations')
      .select('tenant_id')
      .orderBy('tenant_id')
      .execute();
    return rows.map((row) => row.tenant_id);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}
