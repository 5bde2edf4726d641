import { randomUUID } from 'node:crypto';

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

  it('fails open when Redis is unreachable: misses fast, never throws', async () => {
    const cache = RedisSearchCache.connect({ REDIS_URL: 'redis://127.0.0.1:1' }, 60);
    const started = performance.now();
    expect(await cache.get('k')).toBeUndefined();
    await cache.set('k', 'v');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(cache.counters.errors).toBeGreaterThan(0);
    await cache.close();
  });
});
