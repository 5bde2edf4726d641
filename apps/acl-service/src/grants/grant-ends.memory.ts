import type { GrantEnd, GrantEnds } from './grant-ends.repository';

/** GrantEnds in memory, for unit tests. */
export class MemoryGrantEnds implements GrantEnds {
  readonly rows = new Map<string, GrantEnd>();

  async all(): Promise<GrantEnd[]> {
    return [...this.rows.values()];
  }
  async set(end: GrantEnd): Promise<void> {
    this.rows.set(key(end.tenantId, end.member, end.target), end);
  }
  async clear(tenantId: string, member: string, target: string): Promise<void> {
    this.rows.delete(key(tenantId, member, target));
  }
  async ended(now: Date, limit: number): Promise<GrantEnd[]> {
    return [...this.rows.values()]
      .filter((end) => end.expiresAt <= now)
      .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
      .slice(0, limit);
  }
  async claim(end: GrantEnd): Promise<boolean> {
    const k = key(end.tenantId, end.member, end.target);
    const row = this.rows.get(k);
    if (!row || row.expiresAt > end.expiresAt) return false;
    return this.rows.delete(k);
  }
}

const key = (tenantId: string, member: string, target: string) =>
  `${tenantId}\u0000${member}\u0000${target}`;
