import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';

import type { DB } from '../platform/db.generated';
import { ACL_DB } from '../platform/tokens';

/** Each tenant's policy version: callers cache expansions and drop them when it moves. */
export interface PolicyVersions {
  /** 0 for a tenant whose policy never changed. */
  current(tenantId: string): Promise<number>;
  /** Moves the tenant's version on by one and returns the new one. */
  bump(tenantId: string): Promise<number>;
  /** Every tenant's version (tenants whose policy never changed are absent). */
  all(): Promise<Map<string, number>>;
}

@Injectable()
export class PolicyVersionsRepository implements PolicyVersions {
  constructor(@Inject(ACL_DB) private readonly db: Kysely<DB>) {}

  async current(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('policy_versions')
      .select('version')
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return Number(row?.version ?? 0);
  }

  async all(): Promise<Map<string, number>> {
    const rows = await this.db.selectFrom('policy_versions').selectAll().execute();
    return new Map(rows.map((row) => [row.tenant_id, Number(row.version)]));
  }

  async bump(tenantId: string): Promise<number> {
    const row = await this.db
      .insertInto('policy_versions')
      .values({ tenant_id: tenantId, version: 1 })
      .onConflict((conflict) =>
        conflict
          .column('tenant_id')
          .doUpdateSet((eb) => ({ version: eb('policy_versions.version', '+', 1) })),
      )
      .returning('version')
      .executeTakeFirstOrThrow();
    return Number(row.version);
  }
}
