import type { Enforcer } from 'casbin';

import type { GrantEnd } from './grant-ends.repository';

const keyOf = (member: string, target: string) => `${member}\u0000${target}`;

/**
 * The ends of one enforcer's expiring grouping rules (ADR 54). Before an answer, `dropDue` removes
 * the rules whose end has passed from that enforcer's memory (not from the store: the expiry job
 * does that, audited), so an ended grant is never honoured however late the job runs. A fresh
 * enforcer gets a fresh instance, built from the stored ends before it is put to use.
 */
export class EndingGrants {
  /** Per tenant: `member\0target` → end (ms). */
  private readonly ends = new Map<string, Map<string, GrantEnd>>();
  private readonly dropped = new Set<string>();
  /** The earliest end not yet dropped: until then `dropDue` is one comparison. */
  private next = Infinity;

  constructor(ends: GrantEnd[] = []) {
    for (const end of ends) this.set(end);
  }

  set(end: GrantEnd): void {
    let tenant = this.ends.get(end.tenantId);
    if (!tenant) this.ends.set(end.tenantId, (tenant = new Map()));
    const key = keyOf(end.member, end.target);
    tenant.set(key, end);
    this.dropped.delete(`${end.tenantId}\u0000${key}`);
    this.next = Math.min(this.next, end.expiresAt.getTime());
  }

  clear(tenantId: string, member: string, target: string): void {
    const key = keyOf(member, target);
    this.ends.get(tenantId)?.delete(key);
    this.dropped.delete(`${tenantId}\u0000${key}`);
  }

  /** The end of `member → target`, if it has one. */
  endOf(tenantId: string, member: string, target: string): Date | undefined {
    return this.ends.get(tenantId)?.get(keyOf(member, target))?.expiresAt;
  }

  /** The tenant's ends still ahead at `now`, for the policy listing. */
  list(tenantId: string, now: number): GrantEnd[] {
    return [...(this.ends.get(tenantId)?.values() ?? [])].filter(
      (end) => end.expiresAt.getTime() > now,
    );
  }

  /** Removes from `enforcer` (in memory only) every rule whose end is at or before `now`. */
  async dropDue(enforcer: Enforcer, now: number): Promise<void> {
    if (now < this.next) return;
    let next = Infinity;
    for (const [tenantId, tenant] of this.ends) {
      for (const [key, end] of tenant) {
        const at = end.expiresAt.getTime();
        const id = `${tenantId}\u0000${key}`;
        if (this.dropped.has(id)) continue;
        if (at > now) {
          next = Math.min(next, at);
          continue;
        }
        this.dropped.add(id);
        await enforcer.selfRemovePolicy('g', 'g', [end.member, end.target, tenantId]);
      }
    }
    this.next = next;
  }

  /**
   * The earliest end after `now` among the tenant's grants held by one of `principals` (a caller's
   * expansion): an answer built from them is valid until then. Undefined when none ends.
   */
  validUntil(tenantId: string, principals: Iterable<string>, now: number): Date | undefined {
    const tenant = this.ends.get(tenantId);
    if (!tenant?.size) return undefined;
    const held = new Set(principals);
    let earliest = Infinity;
    for (const end of tenant.values()) {
      const at = end.expiresAt.getTime();
      if (at > now && at < earliest && held.has(end.member)) earliest = at;
    }
    return earliest === Infinity ? undefined : new Date(earliest);
  }
}

/**
 * Removes a grouping rule from the enforcer and from the store. An ended rule was usually dropped
 * from memory already, where casbin's own delete would no longer reach the store.
 */
export async function removeGrouping(enforcer: Enforcer, rule: string[]): Promise<void> {
  await enforcer.selfRemovePolicy('g', 'g', rule);
  await enforcer
    .getAdapter()
    .removePolicy('g', 'g', rule)
    .catch((error: unknown) => {
      // casbin's StringAdapter (unit tests) stores nothing.
      if (!(error instanceof Error && error.message === 'not implemented')) throw error;
    });
}
