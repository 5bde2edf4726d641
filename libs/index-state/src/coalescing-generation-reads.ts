import type { TenantId } from '@kb/contracts';

import type { IndexGenerations } from './index-generations';

interface TenantReads {
  /** The read on its way to the store, if any. */
  inFlight?: Promise<number>;
  /** The read that starts when `inFlight` ends, shared by everyone who asked meanwhile. */
  next?: Promise<number>;
}

/**
 * Generation reads for a busy reader (query-service's result cache, docs/adr/0029): at most one
 * read per tenant on its way to the store at a time; callers arriving meanwhile share the next
 * read, which starts once the current one is back. Never fresher than needed, never staler: every
 * answer comes from a read that started after the caller asked, so a bump committed before a
 * search began is always seen. Under load a tenant's searches cost one store round trip each
 * round trip's time, instead of one each.
 */
export class CoalescingGenerationReads implements Pick<IndexGenerations, 'current'> {
  private readonly tenants = new Map<TenantId, TenantReads>();

  constructor(private readonly store: Pick<IndexGenerations, 'current'>) {}

  current(tenantId: TenantId): Promise<number> {
    let reads = this.tenants.get(tenantId);
    if (!reads) {
      reads = {};
      this.tenants.set(tenantId, reads);
    }
    if (!reads.inFlight) return this.start(tenantId, reads);
    if (!reads.next) {
      const state = reads;
      reads.next = state.inFlight!.then(
        () => this.start(tenantId, state, true),
        () => this.start(tenantId, state, true),
      );
    }
    return reads.next;
  }

  private start(tenantId: TenantId, reads: TenantReads, fromNext = false): Promise<number> {
    if (fromNext) reads.next = undefined;
    const read = this.store.current(tenantId);
    reads.inFlight = read;
    const done = (): void => {
      if (reads.inFlight !== read) return;
      reads.inFlight = undefined;
      if (!reads.next) this.tenants.delete(tenantId);
    };
    read.then(done, done);
    return read;
  }
}
