import { ErrorKind } from '@kb/errors';

import { RateLimitError } from './rate-limit.errors';
import { FlexibleRateLimiter, rateLimitSettingsOf } from './rate-limiter';

const alice = { tenantId: 'acme', userId: 'alice' } as const;
const bob = { tenantId: 'acme', userId: 'bob' } as const;
const carol = { tenantId: 'other', userId: 'alice' } as const;

/** Resolves with the error a call throws, or undefined when it passes. */
async function outcome(call: Promise<void>): Promise<unknown> {
  return call.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('FlexibleRateLimiter (in process, no Redis)', () => {
  const limiter = () =>
    new FlexibleRateLimiter(
      { windowSeconds: 60, buckets: { search: { principal: 2, tenant: 3 } } },
      null,
    );

  it('lets a caller spend their budget, then refuses with rate_limited and a retry delay', async () => {
    const limits = limiter();
    await limits.consume('search', alice);
    await limits.consume('search', alice);
    const refused = await outcome(limits.consume('search', alice));
    expect(refused).toBeInstanceOf(RateLimitError);
    expect(refused).toMatchObject({
      code: 'rate_limited',
      kind: ErrorKind.ResourceExhausted,
      message: 'too many search calls from this caller; retry later',
    });
    const retryAfter = (refused as RateLimitError).retryAfterSeconds ?? 0;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  it("holds the tenant's budget across its callers, and keeps tenants apart", async () => {
    const limits = limiter();
    await limits.consume('search', alice);
    await limits.consume('search', alice);
    await limits.consume('search', bob);
    await expect(limits.consume('search', bob)).rejects.toMatchObject({
      message: 'too many search calls from this tenant; retry later',
    });
    // Another tenant's user of the same name has budgets of their own.
    await expect(limits.consume('search', carol)).resolves.toBeUndefined();
  });

  it('does not limit a bucket without settings, nor a scope set to 0', async () => {
    const limits = new FlexibleRateLimiter(
      rateLimitSettingsOf({
        RATE_LIMIT_WINDOW_SECONDS: 60,
        RATE_LIMIT_SEARCH_PER_PRINCIPAL: 0,
        RATE_LIMIT_SEARCH_PER_TENANT: 0,
        RATE_LIMIT_UPLOAD_PER_PRINCIPAL: 1,
        RATE_LIMIT_UPLOAD_PER_TENANT: 0,
        RATE_LIMIT_ADMIN_PER_PRINCIPAL: 0,
        RATE_LIMIT_ADMIN_PER_TENANT: 1,
      }),
      null,
    );
    for (let i = 0; i < 50; i++) await limits.consume('search', alice);
    await limits.consume('upload', alice);
    await expect(limits.consume('upload', alice)).rejects.toBeInstanceOf(RateLimitError);
    await limits.consume('admin', alice);
    await expect(limits.consume('admin', bob)).rejects.toBeInstanceOf(RateLimitError);
  });

  it('counts in the process while Redis is unreachable, rather than failing or not limiting', async () => {
    const limits = FlexibleRateLimiter.fromConfig({
      REDIS_URL: 'redis://127.0.0.1:1',
      RATE_LIMIT_WINDOW_SECONDS: 60,
      RATE_LIMIT_SEARCH_PER_PRINCIPAL: 1,
      RATE_LIMIT_SEARCH_PER_TENANT: 0,
      RATE_LIMIT_UPLOAD_PER_PRINCIPAL: 0,
      RATE_LIMIT_UPLOAD_PER_TENANT: 0,
      RATE_LIMIT_ADMIN_PER_PRINCIPAL: 0,
      RATE_LIMIT_ADMIN_PER_TENANT: 0,
    });
    try {
      await limits.consume('search', alice);
      await expect(limits.consume('search', alice)).rejects.toBeInstanceOf(RateLimitError);
    } finally {
      await limits.close();
    }
  });
});
