import type { TenantId } from '@kb/contracts';
import type { IndexGenerations } from '@kb/index-state';

/** In-memory `IndexGenerations`: one counter per tenant. */
export class MemoryIndexGenerations implements IndexGenerations {
  private readonly generations = new Map<TenantId, number>();

  async bump(tenantId: TenantId): Promise<number> {
    const next = (this.generations.get(tenantId) ?? 0) + 1;
    this.generations.set(tenantId, next);
    return next;
  }

  async current(tenantId: TenantId): Promise<number> {
    return this.generations.get(tenantId) ?? 0;
  }

  async tenants(): Promise<TenantId[]> {
    return [...this.generations.keys()].sort();
  }
}
