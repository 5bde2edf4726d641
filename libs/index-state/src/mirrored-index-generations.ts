import type { TenantId } from '@kb/contracts';

import type { IndexGenerations } from './index-generations';

/** Where a bumped generation is copied for readers that must not wait on Postgres (Redis). */
export interface GenerationMirror {
  /** Raises the tenant's mirrored generation to `generation` (never lowers it). */
  raiseGeneration(tenantId: TenantId, generation: number): Promise<void>;
}

/**
 * Index generations whose every bump is also raised in a mirror (query-service reads the
 * generation and a cached result in one Redis round trip: docs/adr/0029). Postgres stays the
 * source; the bump returns once the mirror has it. A mirror that fails is logged by `onError` and
 * not retried: its key expires (`SEARCH_GENERATION_TTL_MS`) and readers go back to Postgres, so a
 * lost raise delays a bump's effect on cached results by that long at most, and never stops
 * indexing.
 */
export class MirroredIndexGenerations implements IndexGenerations {
  constructor(
    private readonly inner: IndexGenerations & { close(): Promise<void> },
    private readonly mirror: GenerationMirror,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  async bump(tenantId: TenantId): Promise<number> {
    const generation = await this.inner.bump(tenantId);
    await this.mirror.raiseGeneration(tenantId, generation).catch(this.onError);
    return generation;
  }

  current(tenantId: TenantId): Promise<number> {
    return this.inner.current(tenantId);
  }

  tenants(): Promise<TenantId[]> {
    return this.inner.tenants();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
