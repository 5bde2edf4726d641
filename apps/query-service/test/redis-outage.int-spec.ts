import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { HealthController, Readiness } from '@kb/http';

import { RedisSearchCache } from '../src/cache/search.cache';

jest.setTimeout(60_000);

/** A port of this test's own (block 12): the shared Redis is never stopped. */
const PORT = Number(process.env['KB_FAULT_REDIS_PORT'] ?? 12_379);

/** A private redis-server this test starts and kills (SIGKILL, like a crash). */
function startRedis(dir: string): ChildProcess {
  return spawn(
    'redis-server',
    [
      '--bind',
      '127.0.0.1',
      '--port',
      String(PORT),
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
}

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('query-service while Redis goes away and comes back', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-redis-outage-'));
  let redis: ChildProcess | undefined;

  afterAll(() => {
    redis?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('reports Redis degraded (still ready), fails open, and reconnects by itself', async () => {
    redis = startRedis(dir);
    const cache = RedisSearchCache.connect({ REDIS_URL: `redis://127.0.0.1:${PORT}` }, 60);
    // The check query-service's app module registers for its fail-open cache.
    const health = new HealthController(
      new Readiness([
        { name: 'search-backend', check: async () => true },
        { name: 'redis', critical: false, check: async () => cache.isReady },
      ]),
    );
    try {
      await until(() => cache.isReady);
      await cache.set('kb:test:k', 'v1');
      expect(await cache.get('kb:test:k')).toBe('v1');
      expect(await health.ready()).toEqual({
        status: 'ready',
        checks: { 'search-backend': true, redis: true },
      });

      redis.kill('SIGKILL');
      await until(() => !cache.isReady);
      expect(await cache.get('kb:test:k')).toBeUndefined(); // a miss, not an error
      expect(await health.ready()).toEqual({
        status: 'ready',
        checks: { 'search-backend': true, redis: false },
        degraded: { redis: 'not ready' },
      });

      redis = startRedis(dir);
      await until(() => cache.isReady);
      await cache.set('kb:test:k', 'v2');
      expect(await cache.get('kb:test:k')).toBe('v2');
      expect((await health.ready()).checks.redis).toBe(true);
    } finally {
      await cache.close();
    }
  });
});
