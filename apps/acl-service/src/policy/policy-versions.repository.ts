import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, sql } from 'kysely';

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
  constructor(@Inject(ACL_DB) private readonly db: Kysely<unknown>) {}

  async current(tenantId: string): Promise<number> {
    const { rows } = await sql<{ version: string }>`
      SELECT version FROM policy_versions WHERE tenant_id = ${tenantId}`.execute(this.db);
    return Number(rows[0]?.version ?? 0);
  }

  async all(): Promise<Map<string, number>> {
    const { rows } = await sql<{ tenant_id: string; version: string }>`
      SELECT tenant_id, version FROM policy_versions`.execute(this.db);
    return new Map(rows.map((row) => [row.tenant_id, Number(row.version)]));
  }

  async bump(tenantId: string): Promise<number> {
    const { rows } = await sql<{ version: string }>`
      INSERT INTO policy_versions (tenant_id, version) VALUES (${tenantId}, 1)
      ON CONFLICT (tenant_id) DO UPDATE SET version = policy_versions.version + 1
      RETURNING version`.execute(this.db);
    return Number(rows[0]!.version);
  }
}
