import { randomUUID } from 'node:crypto';

import { FlexibleRateLimiter, RateLimitError } from '../src/index';

const env = (perPrincipal: number, perTenant: number) => ({
  REDIS_URL: process.env['REDIS_URL']!,
  RATE_LIMIT_WINDOW_SECONDS: 30,
  RATE_LIMIT_SEARCH_PER_PRINCIPAL: perPrincipal,
  RATE_LIMIT_SEARCH_PER_TENANT: perTenant,
  RATE_LIMIT_UPLOAD_PER_PRINCIPAL: 0,
  RATE_LIMIT_UPLOAD_PER_TENANT: 0,
  RATE_LIMIT_ADMIN_PER_PRINCIPAL: 0,
  RATE_LIMIT_ADMIN_PER_TENANT: 0,
});

/** Waits until the limiters' clients have connected (they connect in the background). */
async function shared(...limiters: FlexibleRateLimiter[]): Promise<void> {
  for (let i = 0; i < 100 && !limiters.every((l) => l.isShared); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(limiters.map((l) => l.isShared)).toEqual(limiters.map(() => true));
}

describe('FlexibleRateLimiter on Redis: two replicas share one budget', () => {
  const limiters: FlexibleRateLimiter[] = [];
  afterAll(() => Promise.all(limiters.map((l) => l.close())));

  const replicas = async (perPrincipal: number, perTenant: number) => {
    const pair = [
      FlexibleRateLimiter.fromConfig(env(perPrincipal, perTenant)),
      FlexibleRateLimiter.fromConfig(env(perPrincipal, perTenant)),
    ] as const;
    limiters.push(...pair);
    // Both connected, so no call falls back to the per-process count.
    await shared(...pair);
    return pair;
  };

  it("refuses a caller's call on one replica once calls on both spent the budget", async () => {
    const [a, b] = await replicas(4, 0);
    const caller = { tenantId: `rl-${randomUUID().slice(0, 8)}`, userId: 'alice' };
    await a.consume('search', caller);
    await b.consume('search', caller);
    await a.consume('search', caller);
    await b.consume('search', caller);
    const refused = await a.consume('search', caller).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitError);
    expect((refused as RateLimitError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((refused as RateLimitError).retryAfterSeconds).toBeLessThanOrEqual(30);
    await expect(b.consume('search', caller)).rejects.toBeInstanceOf(RateLimitError);
  });

  it("holds a tenant's budget across its callers and across replicas", async () => {
    const [a, b] = await replicas(0, 3);
    const tenantId = `rl-${randomUUID().slice(0, 8)}`;
    await a.consume('search', { tenantId, userId: 'u1' });
    await b.consume('search', { tenantId, userId: 'u2' });
    await a.consume('search', { tenantId, userId: 'u3' });
    await expect(b.consume('search', { tenantId, userId: 'u4' })).rejects.toMatchObject({
      code: 'rate_limited',
      message: 'too many search calls from this tenant; retry later',
    });
    await expect(
      b.consume('search', { tenantId: `${tenantId}-x`, userId: 'u4' }),
    ).resolves.toBeUndefined();
  });
});
