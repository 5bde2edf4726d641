import { randomUUID } from 'node:crypto';

import { searchGenerationKey } from '@kb/contracts';
import { createClient } from 'redis';

import { RedisSearchCache } from '../src/cache/search.cache';

jest.setTimeout(20_000);

/** Real Redis from `npm run infra:up`, and a port where nothing listens for the outage case. */
describe('RedisSearchCache', () => {
  it('stores and returns entries, counting hits and misses', async () => {
    const cache = RedisSearchCache.connect({ REDIS_URL: process.env['REDIS_URL']! }, 60);
    for (let i = 0; i < 250 && !cache.isReady; i++) await new Promise((r) => setTimeout(r, 20));
    const key = `kb:test:${randomUUID()}`;
    expect(await cache.get(key)).toBeUndefined();
    await cache.set(key, '{"hits":[]}');
    expect(await cache.get(key)).toBe('{"hits":[]}');
    expect(cache.counters).toMatchObject({ hits: 1, misses: 1 });
    await cache.close();
  });

  it('reads the mirrored generation and the entry in one MGET, and raises the mirror only upward', async () => {
    const cache = RedisSearchCache.connect({ REDIS_URL: process.env['REDIS_URL']! }, 60);
    const redis = createClient({ url: process.env['REDIS_URL']! });
    await redis.connect();
    for (let i = 0; i < 250 && !cache.isReady; i++) await new Promise((r) => setTimeout(r, 20));
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const key = `kb:test:${randomUUID()}`;
    try {
      expect(await cache.lookup(tenant, key)).toEqual({ generation: undefined, value: undefined });
      await cache.raiseGeneration(tenant, 5);
      await cache.set(key, '{"generation":5}');
      const before = Number(
        (await redis.info('commandstats')).match(/cmdstat_mget:calls=(\d+)/)?.[1] ?? 0,
      );
      expect(await cache.lookup(tenant, key)).toEqual({ generation: 5, value: '{"generation":5}' });
      const after = Number(
        (await redis.info('commandstats')).match(/cmdstat_mget:calls=(\d+)/)?.[1] ?? 0,
      );
      expect(after - before).toBeGreaterThanOrEqual(1);
      // A second key (a miss's query embedding) rides in the same MGET, present or not.
      const also = `kb:test:${randomUUID()}`;
      expect(await cache.lookup(tenant, key, also)).toEqual({
        generation: 5,
        value: '{"generation":5}',
        also: undefined,
      });
      await cache.set(also, 'vector');
      const mgets = Number(
        (await redis.info('commandstats')).match(/cmdstat_mget:calls=(\d+)/)?.[1] ?? 0,
      );
      const gets = Number(
        (await redis.info('commandstats')).match(/cmdstat_get:calls=(\d+)/)?.[1] ?? 0,
      );
      expect((await cache.lookup(tenant, key, also)).also).toBe('vector');
      const info = await redis.info('commandstats');
      expect(Number(info.match(/cmdstat_mget:calls=(\d+)/)?.[1] ?? 0) - mgets).toBe(1);
      expect(Number(info.match(/cmdstat_get:calls=(\d+)/)?.[1] ?? 0) - gets).toBe(0);
      await redis.del(also);
      // A raise from an older Postgres read, arriving after indexing raised it further: ignored.
      await cache.raiseGeneration(tenant, 4);
      expect((await cache.lookup(tenant, key)).generation).toBe(5);
      expect(await redis.pTTL(searchGenerationKey(tenant))).toBeGreaterThan(0);
    } finally {
      await redis.del([key, searchGenerationKey(tenant)]);
      await redis.close();
      await cache.close();
    }
  });

  it('fails open when Redis is unreachable: misses fast, never throws', async () => {
    const cache = RedisSearchCache.connect({ REDIS_URL: 'redis://127.0.0.1:1' }, 60);
    const started = performance.now();
    expect(await cache.get('k')).toBeUndefined();
    expect(await cache.lookup('t', 'k')).toEqual({ generation: undefined, value: undefined });
    await cache.raiseGeneration('t', 1);
    await cache.set('k', 'v');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(cache.counters.errors).toBeGreaterThan(0);
    await cache.close();
  });
});
