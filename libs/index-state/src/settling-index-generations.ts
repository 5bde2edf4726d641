import type { TenantId } from '@kb/contracts';

import type { IndexGenerations } from './index-generations';

/**
 * Index generations for an eventually consistent vector store (Pinecone, review M8). A bump
 * right after a write retires older cached results, but a search in the next moments may still
 * read the store from before the write and cache that answer at the new generation, for the
 * cache's whole TTL. So every bump is repeated once `settleMs` after the tenant's latest one,
 * when the store has caught up: whatever was cached in between is retired too. Bumps of one
 * tenant inside the window share one timer. At close, pending bumps are made at once (they can
 * no longer wait); a process killed inside the window leaves those entries to their TTL.
 */
export class SettlingIndexGenerations implements IndexGenerations {
  /** Per tenant: when its repeated bump is due, and the timer that makes it. */
  private readonly pending = new Map<TenantId, { due: number; timer: NodeJS.Timeout }>();

  constructor(
    private readonly inner: IndexGenerations & { close(): Promise<void> },
    private readonly settleMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async bump(tenantId: TenantId): Promise<number> {
    const generation = await this.inner.bump(tenantId);
    if (this.settleMs > 0) this.schedule(tenantId, this.now() + this.settleMs);
    return generation;
  }

  current(tenantId: TenantId): Promise<number> {
    return this.inner.current(tenantId);
  }

  tenants(): Promise<TenantId[]> {
    return this.inner.tenants();
  }

  /** Makes the pending bumps now, then closes the store. */
  async close(): Promise<void> {
    const tenants = [...this.pending.keys()];
    for (const { timer } of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    await Promise.allSettled(tenants.map((tenantId) => this.inner.bump(tenantId)));
    await this.inner.close();
  }

  private schedule(tenantId: TenantId, due: number): void {
    const held = this.pending.get(tenantId);
    if (held) {
      held.due = Math.max(held.due, due);
      return;
    }
    const fire = (): void => {
      const entry = this.pending.get(tenantId);
      if (!entry) return;
      const wait = entry.due - this.now();
      if (wait > 0) {
        entry.timer = setTimeout(fire, wait);
        entry.timer.unref();
        return;
      }
      this.pending.delete(tenantId);
      // A failed repeat leaves the entries to their TTL, as before this class; nothing to raise to.
      void this.inner.bump(tenantId).catch(() => undefined);
    };
    const timer = setTimeout(fire, due - this.now());
    timer.unref();
    this.pending.set(tenantId, { due, timer });
  }
}
