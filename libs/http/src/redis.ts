import { readFileSync } from 'node:fs';

import { createClient, type RedisClientType } from 'redis';

/** How a service reaches Redis, as `redisConfigSchema` (libs/config) names the variables. */
export interface RedisSettings {
  /** `redis://host:6379` or, with TLS, `rediss://host:6380`; credentials belong in the two below. */
  REDIS_URL: string;
  /** ACL user (Redis 6+); with only a password, Redis' `requirepass` AUTH. */
  REDIS_USERNAME?: string | undefined;
  REDIS_PASSWORD?: string | undefined;
  /** A PEM bundle to verify the server's certificate with (`rediss://` to a private CA). */
  REDIS_TLS_CA_FILE?: string | undefined;
}

/**
 * A Redis client for a cache or a limiter, not yet connected: short connect timeout, reconnects
 * with a capped backoff, and no offline queue, so a command fails at once while Redis is away
 * instead of waiting for it. AUTH and TLS come from the settings (`rediss://` turns TLS on).
 */
export function createRedisClient(settings: RedisSettings): RedisClientType {
  const tls = settings.REDIS_URL.startsWith('rediss:');
  const ca = settings.REDIS_TLS_CA_FILE ? readFileSync(settings.REDIS_TLS_CA_FILE) : undefined;
  return createClient({
    url: settings.REDIS_URL,
    ...(settings.REDIS_USERNAME ? { username: settings.REDIS_USERNAME } : {}),
    ...(settings.REDIS_PASSWORD ? { password: settings.REDIS_PASSWORD } : {}),
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 1_000,
      reconnectStrategy: (retries: number) => Math.min(retries * 200, 5_000),
      ...(tls ? { tls: true as const, ...(ca ? { ca } : {}) } : {}),
    },
  }) as RedisClientType;
}
