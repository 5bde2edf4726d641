import {
  RAISE_SEARCH_GENERATION_LUA,
  SEARCH_GENERATION_TTL_MS,
  searchGenerationKey,
  type TenantId,
} from '@kb/contracts';

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

/** The one Redis call a mirror makes (node-redis's `eval`); kept structural, no client here. */
export interface RedisEval {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/**
 * The mirror in Redis, beside the tenant's cached search results: query-service reads both in one
 * MGET (docs/adr/0029). A raise never lowers the key, so a late raise of an earlier bump is
 * harmless; the key expires after `SEARCH_GENERATION_TTL_MS`, after which readers go to Postgres.
 * Throws when Redis fails (`MirroredIndexGenerations` logs it).
 */
export class RedisGenerationMirror implements GenerationMirror {
  constructor(private readonly client: RedisEval) {}

  async raiseGeneration(tenantId: TenantId, generation: number): Promise<void> {
    await this.client.eval(RAISE_SEARCH_GENERATION_LUA, {
      keys: [searchGenerationKey(tenantId)],
      arguments: [String(generation), String(SEARCH_GENERATION_TTL_MS)],
    });
  }
}
