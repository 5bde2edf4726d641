import type { TenantId } from '@kb/contracts';

/**
 * The index generation of each tenant: a counter bumped after every change to what search can
 * return (a version indexed, a document deleted, an ACL or attributes changed). Result caches
 * store the generation with each entry and serve an entry only while it is still current, so a
 * change retires every older entry at once: no scan, no stale hit. indexing-service bumps it,
 * query-service reads it.
 */
export interface IndexGenerations {
  /** Moves the tenant to its next generation and returns it. */
  bump(tenantId: TenantId): Promise<number>;
  /** The tenant's generation; 0 while its indexes never changed. */
  current(tenantId: TenantId): Promise<number>;
  /** Tenants that ever changed their indexes (each has a generation): the orphan sweep's. */
  tenants(): Promise<TenantId[]>;
}
