import { meter } from '@kb/observability';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  RLWrapperTimeouts,
} from 'rate-limiter-flexible';
import type { RedisClientType } from 'redis';

import { createRedisClient, type RedisSettings } from '../redis';
import { RateLimitError } from './rate-limit.errors';

/** The budgets a handler can draw on, named in `@Authenticated({ rateLimit })`. */
export type RateLimitBucket = 'search' | 'upload' | 'admin' | 'read' | 'model';
export type RateLimitScope = 'principal' | 'tenant';

/** Calls per window for one caller and for the caller's whole tenant; 0 means no limit there. */
export type RateLimit = Record<RateLimitScope, number>;

export interface RateLimitSettings {
  windowSeconds: number;
  buckets: Partial<Record<RateLimitBucket, RateLimit>>;
}

/** The variables as `rateLimitConfigSchema` (libs/config) names them. */
export interface RateLimitEnv {
  RATE_LIMIT_WINDOW_SECONDS: number;
  RATE_LIMIT_SEARCH_PER_PRINCIPAL: number;
  RATE_LIMIT_SEARCH_PER_TENANT: number;
  RATE_LIMIT_UPLOAD_PER_PRINCIPAL: number;
  RATE_LIMIT_UPLOAD_PER_TENANT: number;
  RATE_LIMIT_ADMIN_PER_PRINCIPAL: number;
  RATE_LIMIT_ADMIN_PER_TENANT: number;
  /** Reads of content, text, listings and stats (document-service); unset is no limit. */
  RATE_LIMIT_READ_PER_PRINCIPAL?: number | undefined;
  RATE_LIMIT_READ_PER_TENANT?: number | undefined;
  /** Model runs on request: POST /v1/embeddings, POST /v1/rerank (review N5); unset is no limit. */
  RATE_LIMIT_MODEL_PER_PRINCIPAL?: number | undefined;
  RATE_LIMIT_MODEL_PER_TENANT?: number | undefined;
}

export function rateLimitSettingsOf(env: RateLimitEnv): RateLimitSettings {
  return {
    windowSeconds: env.RATE_LIMIT_WINDOW_SECONDS,
    buckets: {
      search: {
        principal: env.RATE_LIMIT_SEARCH_PER_PRINCIPAL,
        tenant: env.RATE_LIMIT_SEARCH_PER_TENANT,
      },
      upload: {
        principal: env.RATE_LIMIT_UPLOAD_PER_PRINCIPAL,
        tenant: env.RATE_LIMIT_UPLOAD_PER_TENANT,
      },
      admin: {
        principal: env.RATE_LIMIT_ADMIN_PER_PRINCIPAL,
        tenant: env.RATE_LIMIT_ADMIN_PER_TENANT,
      },
      read: {
        principal: env.RATE_LIMIT_READ_PER_PRINCIPAL ?? 0,
        tenant: env.RATE_LIMIT_READ_PER_TENANT ?? 0,
      },
      model: {
        principal: env.RATE_LIMIT_MODEL_PER_PRINCIPAL ?? 0,
        tenant: env.RATE_LIMIT_MODEL_PER_TENANT ?? 0,
      },
    },
  };
}

/** The service's limiter, for the guard behind @Authenticated({ rateLimit }). */
export const RATE_LIMITER = Symbol('RATE_LIMITER');

export interface RateLimiter {
  /** Takes one call from the caller's and the tenant's budget, or throws a `RateLimitError`. */
  consume(bucket: RateLimitBucket, caller: { tenantId: string; userId: string }): Promise<void>;
}

/** Longest a limiter waits for Redis before it counts in this process instead. */
const REDIS_TIMEOUT_MS = 250;

const limited = meter().createCounter('kb_rate_limited_total', {
  description: 'Calls refused with 429 / RESOURCE_EXHAUSTED, by bucket and scope',
});

/**
 * Fixed-window counters from rate-limiter-flexible. With a Redis client every replica counts in
 * the same keys (`kb:rl:v1:<bucket>:<scope>:<key>`, one atomic Lua script per call), so a limit
 * holds however many replicas serve the tenant. While Redis is unreachable or slow (over
 * `REDIS_TIMEOUT_MS`), each replica counts on its own (the library's insurance limiter): limits
 * then hold per replica rather than not at all, and no call waits on Redis.
 */
export class FlexibleRateLimiter implements RateLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  /**
   * The limiter a service boots with: shared through Redis when REDIS_URL is set (its own client,
   * connecting in the background so a Redis outage does not stop the boot), else per process.
   */
  static fromConfig(env: RateLimitEnv & Partial<RedisSettings>): FlexibleRateLimiter {
    const redis = env.REDIS_URL ? createRedisClient({ ...env, REDIS_URL: env.REDIS_URL }) : null;
    if (redis) {
      redis.on('error', () => undefined); // reconnects by itself; calls count locally meanwhile
      void redis.connect().catch(() => undefined);
    }
    return new FlexibleRateLimiter(rateLimitSettingsOf(env), redis, { ownsClient: true });
  }

  constructor(
    settings: RateLimitSettings,
    private readonly redis: RedisClientType | null,
    private readonly options: { ownsClient?: boolean } = {},
  ) {
    for (const [bucket, limit] of Object.entries(settings.buckets)) {
      for (const scope of ['principal', 'tenant'] as const) {
        const points = limit[scope];
        if (points <= 0) continue;
        const options = {
          points,
          duration: settings.windowSeconds,
          keyPrefix: `kb:rl:v1:${bucket}:${scope}`,
        };
        const local = new RateLimiterMemory(options);
        this.limiters.set(
          `${bucket}:${scope}`,
          redis
            ? new RLWrapperTimeouts({
                limiter: new RateLimiterRedis({
                  ...options,
                  storeClient: redis,
                  useRedisPackage: true,
                  rejectIfRedisNotReady: true,
                }),
                timeoutMs: REDIS_TIMEOUT_MS,
                insuranceLimiter: local,
              })
            : local,
        );
      }
    }
  }

  async consume(bucket: RateLimitBucket, caller: { tenantId: string; userId: string }) {
    // The caller's own budget first: one noisy caller is refused before it eats the tenant's.
    // A tenant id has no ':', so the principal key cannot collide across tenants.
    await this.take(bucket, 'principal', `${caller.tenantId}:${caller.userId}`);
    await this.take(bucket, 'tenant', caller.tenantId);
  }

  /** Counting in Redis (shared by every replica) right now, rather than in this process. */
  get isShared(): boolean {
    return this.redis?.isReady ?? false;
  }

  /** Closes the Redis client when the limiter opened it (`fromConfig`). */
  async close(): Promise<void> {
    if (!this.redis || !this.options.ownsClient) return;
    if (this.redis.isReady) await this.redis.close().catch(() => undefined);
    else if (this.redis.isOpen) this.redis.destroy();
  }

  private async take(bucket: RateLimitBucket, scope: RateLimitScope, key: string): Promise<void> {
    const limiter = this.limiters.get(`${bucket}:${scope}`);
    if (!limiter) return;
    try {
      await limiter.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      limited.add(1, { bucket, scope });
      throw new RateLimitError(
        scope === 'principal'
          ? `too many ${bucket} calls from this caller; retry later`
          : `too many ${bucket} calls from this tenant; retry later`,
        Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)),
      );
    }
  }
}
