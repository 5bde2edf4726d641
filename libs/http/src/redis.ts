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
 * `boundsOwnCommands`: the caller puts its own time limit on every command, so the client's
 * (5 s by default) is turned off; each command otherwise arms an `AbortSignal.timeout`, whose
 * firing seconds later still builds an exception, about 80 µs of CPU per command
 * (docs/adr/0029).
 */
export function createRedisClient(
  settings: RedisSettings,
  options: { boundsOwnCommands?: boolean } = {},
): RedisClientType {
  const tls = settings.REDIS_URL.startsWith('rediss:');
  const ca = settings.REDIS_TLS_CA_FILE ? readFileSync(settings.REDIS_TLS_CA_FILE) : undefined;
  return createClient({
    url: settings.REDIS_URL,
    ...(settings.REDIS_USERNAME ? { username: settings.REDIS_USERNAME } : {}),
    ...(settings.REDIS_PASSWORD ? { password: settings.REDIS_PASSWORD } : {}),
    disableOfflineQueue: true,
    ...(options.boundsOwnCommands ? { commandOptions: { timeout: 0 } } : {}),
    socket: {
      connectTimeout: 1_000,
      reconnectStrategy: (retries: number) => Math.min(retries * 200, 5_000),
      ...(tls ? { tls: true as const, ...(ca ? { ca } : {}) } : {}),
    },
  }) as RedisClientType;
}
