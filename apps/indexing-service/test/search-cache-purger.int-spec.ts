import { randomUUID } from 'node:crypto';

import {
  SEARCH_GENERATION_TTL_MS,
  searchCachePrefix,
  searchGenerationKey,
  toTenantId,
} from '@kb/contracts';
import { createClient } from 'redis';

import { RedisSearchCachePurger } from '../src/removal/search-cache.purger';

jest.setTimeout(30_000);

/** Real Redis (the shared local server): tenants of its own, so other keys are left alone. */
describe('RedisSearchCachePurger', () => {
  const url = process.env['REDIS_URL']!;
  const client = createClient({ url });
  const purger = RedisSearchCachePurger.connect({ REDIS_URL: url });
  const run = randomUUID().slice(0, 8);
  const [tenant, similar] = [toTenantId(`p-${run}`), toTenantId(`p-${run}-2`)];

  beforeAll(async () => {
    await client.connect();
  });

  afterAll(async () => {
    await client.del([`${searchCachePrefix(similar)}kept`, searchGenerationKey(tenant)]);
    await client.close();
    await purger.close();
  });

  it("removes every cached result of the tenant, and no other tenant's", async () => {
    const keys = Array.from({ length: 1_200 }, (_, i) => `${searchCachePrefix(tenant)}q${i}`);
    for (let i = 0; i < keys.length; i += 400) {
      await client.mSet(keys.slice(i, i + 400).map((key) => [key, '{"text":"secret"}']));
    }
    await client.set(`${searchCachePrefix(similar)}kept`, 'x');
    // The purger connects in the background (a service starts with Redis down); until then a
    // purge fails, and the delete event that asked for it is retried.
    let removed: number | undefined;
    for (let tries = 0; removed === undefined && tries < 50; tries++) {
      removed = await purger.purgeTenant(tenant).catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        return undefined;
      });
    }
    expect(removed).toBe(keys.length);
    expect(await client.exists(keys)).toBe(0);
    expect(await client.exists(`${searchCachePrefix(similar)}kept`)).toBe(1);
    expect(await purger.purgeTenant(tenant)).toBe(0);
  });

  it('raises the mirrored generation, never lowers it, and lets it expire', async () => {
    const key = searchGenerationKey(tenant);
    for (let tries = 0; tries < 50; tries++) {
      const raised = await purger.raiseGeneration(tenant, 4).then(
        () => true,
        () => false,
      );
      if (raised) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await client.get(key)).toBe('4');
    const ttl = await client.pTTL(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(SEARCH_GENERATION_TTL_MS);
    // A late raise from an earlier bump (another replica, a retried event) changes nothing.
    await purger.raiseGeneration(tenant, 3);
    expect(await client.get(key)).toBe('4');
    await purger.raiseGeneration(tenant, 9);
    expect(await client.get(key)).toBe('9');
  });
});
