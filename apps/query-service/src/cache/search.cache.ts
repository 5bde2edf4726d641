import {
  RAISE_SEARCH_GENERATION_LUA,
  SEARCH_GENERATION_TTL_MS,
  searchGenerationKey,
} from '@kb/contracts';
import { createRedisClient, type RedisSettings } from '@kb/http';
import { Logger } from '@nestjs/common';
import type { RedisClientType } from 'redis';

export interface CacheCounters {
  hits: number;
  misses: number;
  errors: number;
}

/**
 * What `lookup` found: the mirrored generation, the entry and the value under the `also` key,
 * each when present.
 */
export interface CacheLookup {
  generation: number | undefined;
  value: string | undefined;
  also?: string | undefined;
}

/**
 * The cache port, holding search results and query embeddings: fail-open, so an outage costs
 * latency, never an answer.
 */
export interface SearchCache {
  get(key: string): Promise<string | undefined>;
  /** Stored for the cache's TTL, or for `ttlSeconds`. */
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  /**
   * The tenant's mirrored index generation and the entry under `key`, in one round trip (one
   * MGET): a cache hit needs nothing else (docs/adr/0029). With `also`, the value under that key
   * in the same round trip (a miss's query embedding). Each is undefined when absent, and all
   * when Redis fails.
   */
  lookup(tenantId: string, key: string, also?: string): Promise<CacheLookup>;
  /** Raises the tenant's mirrored generation to one read from Postgres (never lowers it). */
  raiseGeneration(tenantId: string, generation: number): Promise<void>;
  /**
   * Adds one to a counter that expires `ttlSeconds` after it was created (a day's searches);
   * answers the new count, or undefined when Redis fails.
   */
  increment?(key: string, ttlSeconds: number): Promise<number | undefined>;
  readonly counters: CacheCounters;
  /** Connected and accepting commands (readiness reports it; the cache works without). */
  readonly isReady: boolean;
  close(): Promise<void>;
}

/**
 * The Redis cache. Every command has a short timeout and errors are counted and swallowed;
 * while Redis is unreachable the client stops queueing commands, so searches go straight to the
 * indexes instead of waiting on it.
 */
export class RedisSearchCache implements SearchCache {
  private readonly logger = new Logger(RedisSearchCache.name);
  private readonly client: RedisClientType;
  readonly counters: CacheCounters = { hits: 0, misses: 0, errors: 0 };

  private constructor(
    client: RedisClientType,
    private readonly ttlSeconds: number,
  ) {
    this.client = client;
    this.client.on('error', (error: unknown) => {
      this.counters.errors++;
      this.logger.warn(`redis: ${String(error)}`);
    });
  }

  /** AUTH and TLS as the settings say (`rediss://`, REDIS_USERNAME / REDIS_PASSWORD). */
  static connect(settings: RedisSettings, ttlSeconds: number): RedisSearchCache {
    // Every command of this cache is bounded here (`withTimeout`, 250 ms).
    const client = createRedisClient(settings, { boundsOwnCommands: true });
    const cache = new RedisSearchCache(client, ttlSeconds);
    // Not awaited: with Redis down the service still starts, and the client keeps reconnecting.
    void client.connect().catch(() => undefined);
    return cache;
  }

  /** Connected and accepting commands. */
  get isReady(): boolean {
    return this.client.isReady;
  }

  async get(key: string): Promise<string | undefined> {
    try {
      const value = await withTimeout(this.client.get(key), 250);
      if (value === null || value === undefined) {
        this.counters.misses++;
        return undefined;
      }
      this.counters.hits++;
      return value;
    } catch (error) {
      this.counters.errors++;
      this.counters.misses++;
      this.logger.debug?.(`cache get failed: ${String(error)}`);
      return undefined;
    }
  }

  async lookup(tenantId: string, key: string, also?: string): Promise<CacheLookup> {
    try {
      const [generation, value, alsoValue] = await withTimeout(
        this.client.mGet([searchGenerationKey(tenantId), key, ...(also ? [also] : [])]),
        250,
      );
      this.count(value);
      if (also) this.count(alsoValue);
      return {
        generation:
          generation === null || generation === undefined ? undefined : Number(generation),
        value: value ?? undefined,
        ...(also ? { also: alsoValue ?? undefined } : {}),
      };
    } catch (error) {
      this.counters.errors++;
      this.counters.misses++;
      this.logger.debug?.(`cache lookup failed: ${String(error)}`);
      return { generation: undefined, value: undefined };
    }
  }

  private count(value: string | null | undefined): void {
    if (value === null || value === undefined) this.counters.misses++;
    else this.counters.hits++;
  }

  async increment(key: string, ttlSeconds: number): Promise<number | undefined> {
    try {
      const [count] = await withTimeout(
        this.client.multi().incr(key).expire(key, ttlSeconds, 'NX').exec(),
        250,
      );
      return Number(count);
    } catch (error) {
      this.counters.errors++;
      this.logger.debug?.(`counter increment failed: ${String(error)}`);
      return undefined;
    }
  }

  async raiseGeneration(tenantId: string, generation: number): Promise<void> {
    try {
      await withTimeout(
        this.client.eval(RAISE_SEARCH_GENERATION_LUA, {
          keys: [searchGenerationKey(tenantId)],
          arguments: [String(generation), String(SEARCH_GENERATION_TTL_MS)],
        }),
        250,
      );
    } catch (error) {
      this.counters.errors++;
      this.logger.debug?.(`generation raise failed: ${String(error)}`);
    }
  }

  async set(key: string, value: string, ttlSeconds = this.ttlSeconds): Promise<void> {
    try {
      await withTimeout(
        this.client.set(key, value, { expiration: { type: 'EX', value: ttlSeconds } }),
        250,
      );
    } catch (error) {
      this.counters.errors++;
      this.logger.debug?.(`cache set failed: ${String(error)}`);
    }
  }

  async close(): Promise<void> {
    if (this.client.isReady) await this.client.close().catch(() => undefined);
    else if (this.client.isOpen) this.client.destroy();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
