import { searchCachePrefix, type TenantId } from '@kb/contracts';
import { createRedisClient, type RedisSettings } from '@kb/http';
import { type GenerationMirror, RedisGenerationMirror } from '@kb/index-state';
import { Logger } from '@nestjs/common';
import type { RedisClientType } from 'redis';

/**
 * Removes a tenant's cached search results. query-service's entries hold chunk text; after a
 * delete, the generation bump already stops them being served, and this removes them, so the
 * deleted text is not left in Redis until the TTL (docs/adr/0019).
 */
export interface SearchCachePurger extends GenerationMirror {
  /** Removes every cached result of the tenant; returns how many. */
  purgeTenant(tenantId: TenantId): Promise<number>;
  close(): Promise<void>;
}

/** No Redis configured (REDIS_URL unset): query-service caches nothing either. */
export const noSearchCache: SearchCachePurger = {
  purgeTenant: async () => 0,
  raiseGeneration: async () => undefined,
  close: async () => undefined,
};

/**
 * SCAN for the tenant's keys and UNLINK them. SCAN walks the whole keyspace in small steps (no
 * long block of the server); a delete is rare enough for that. A failure is thrown: the delete
 * event is retried, and every earlier step of a removal is idempotent.
 */
export class RedisSearchCachePurger implements SearchCachePurger {
  private readonly logger = new Logger(RedisSearchCachePurger.name);
  private readonly mirror: RedisGenerationMirror;

  private constructor(private readonly client: RedisClientType) {
    this.mirror = new RedisGenerationMirror(client);
    this.client.on('error', (error: unknown) => this.logger.warn(`redis: ${String(error)}`));
  }

  static connect(settings: RedisSettings): RedisSearchCachePurger {
    const client = createRedisClient(settings);
    const purger = new RedisSearchCachePurger(client);
    // Not awaited: with Redis down the service still starts, and the client keeps reconnecting.
    void client.connect().catch(() => undefined);
    return purger;
  }

  async purgeTenant(tenantId: TenantId): Promise<number> {
    let removed = 0;
    const match = `${searchCachePrefix(tenantId)}*`;
    for await (const keys of this.client.scanIterator({ MATCH: match, COUNT: 500 })) {
      if (keys.length > 0) removed += await this.client.unlink(keys);
    }
    return removed;
  }

  /**
   * Raises the tenant's generation mirrored beside its cached results (query-service reads both in
   * one MGET: docs/adr/0029); never lowers it, so a late raise from an earlier bump is harmless.
   * Throws when Redis fails (`MirroredIndexGenerations` logs it; the mirror then expires).
   */
  raiseGeneration(tenantId: TenantId, generation: number): Promise<void> {
    return this.mirror.raiseGeneration(tenantId, generation);
  }

  async close(): Promise<void> {
    if (this.client.isReady) await this.client.close().catch(() => undefined);
    else if (this.client.isOpen) this.client.destroy();
  }
}
