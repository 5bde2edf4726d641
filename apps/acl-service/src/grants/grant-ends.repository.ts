import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';

import type { DB } from '../platform/db.generated';
import { ACL_DB } from '../platform/tokens';

/** A grouping rule `member → target` in a tenant that is honoured only until `expiresAt`. */
export interface GrantEnd {
  tenantId: string;
  /** `u:alice` or `g:eng`. */
  member: string;
  /** `r:editor`, `g:eng` or a document grant principal `x:<id>`. */
  target: string;
  expiresAt: Date;
}

/** The stored ends of expiring grants (ADR 54). */
export interface GrantEnds {
  /** Every tenant's ends: loaded with the enforcer. */
  all(): Promise<GrantEnd[]>;
  /** Stores (or moves) the end of `member → target`. */
  set(end: GrantEnd): Promise<void>;
  /** The rule no longer ends (made permanent, or removed). */
  clear(tenantId: string, member: string, target: string): Promise<void>;
  /** Ends that passed at `now`, oldest first, at most `limit`. */
  ended(now: Date, limit: number): Promise<GrantEnd[]>;
  /**
   * Deletes the end row of a grant whose rule was removed because it ended; true for the one
   * caller (of several replicas) whose delete found it, which then audits and publishes.
   */
  claim(end: GrantEnd): Promise<boolean>;
}

@Injectable()
export class GrantEndsRepository implements GrantEnds {
  constructor(@Inject(ACL_DB) private readonly db: Kysely<DB>) {}

  async all(): Promise<GrantEnd[]> {
    const rows = await this.db.selectFrom('grant_ends').selectAll().execute();
    return rows.map(toEnd);
  }

  async set(end: GrantEnd): Promise<void> {
    await this.db
      .insertInto('grant_ends')
      .values({
        tenant_id: end.tenantId,
        member: end.member,
        target: end.target,
        expires_at: end.expiresAt,
      })
      .onConflict((c) =>
        c.columns(['tenant_id', 'member', 'target']).doUpdateSet({ expires_at: end.expiresAt }),
      )
      .execute();
  }

  async clear(tenantId: string, member: string, target: string): Promise<void> {
    await this.db
      .deleteFrom('grant_ends')
      .where('tenant_id', '=', tenantId)
      .where('member', '=', member)
      .where('target', '=', target)
      .execute();
  }

  async ended(now: Date, limit: number): Promise<GrantEnd[]> {
    const rows = await this.db
      .selectFrom('grant_ends')
      .selectAll()
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(limit)
      .execute();
    return rows.map(toEnd);
  }

  async claim(end: GrantEnd): Promise<boolean> {
    const row = await this.db
      .deleteFrom('grant_ends')
      .where('tenant_id', '=', end.tenantId)
      .where('member', '=', end.member)
      .where('target', '=', end.target)
      .where('expires_at', '<=', end.expiresAt)
      .returning('tenant_id')
      .executeTakeFirst();
    return row !== undefined;
  }
}

const toEnd = (row: {
  tenant_id: string;
  member: string;
  target: string;
  expires_at: Date;
}): GrantEnd => ({
  tenantId: row.tenant_id,
  member: row.member,
  target: row.target,
  expiresAt: row.expires_at,
});
