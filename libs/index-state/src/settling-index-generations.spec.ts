import type { TenantId } from '@kb/contracts';

import type { IndexGenerations } from './index-generations';
import { SettlingIndexGenerations } from './settling-index-generations';

const acme = 'acme' as TenantId;
const globex = 'globex' as TenantId;

/** Counts bumps per tenant in memory. */
class CountingGenerations implements IndexGenerations {
  readonly counts = new Map<TenantId, number>();
  closed = false;
  async bump(tenantId: TenantId): Promise<number> {
    const next = (this.counts.get(tenantId) ?? 0) + 1;
    this.counts.set(tenantId, next);
    return next;
  }
  async current(tenantId: TenantId): Promise<number> {
    return this.counts.get(tenantId) ?? 0;
  }
  async tenants(): Promise<TenantId[]> {
    return [...this.counts.keys()];
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

describe('SettlingIndexGenerations', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('bumps at once, and again once the store has settled after the latest write', async () => {
    const inner = new CountingGenerations();
    const generations = new SettlingIndexGenerations(inner, 10_000);
    expect(await generations.bump(acme)).toBe(1);
    await jest.advanceTimersByTimeAsync(6_000);
    expect(await generations.bump(acme)).toBe(2);
    // 10 s after the first write, but only 4 s after the second: not yet.
    await jest.advanceTimersByTimeAsync(4_000);
    expect(await generations.current(acme)).toBe(2);
    await jest.advanceTimersByTimeAsync(6_000);
    expect(await generations.current(acme)).toBe(3);
    // Nothing more is pending.
    await jest.advanceTimersByTimeAsync(60_000);
    expect(await generations.current(acme)).toBe(3);
  });

  it('keeps tenants apart, and makes pending bumps at close', async () => {
    const inner = new CountingGenerations();
    const generations = new SettlingIndexGenerations(inner, 10_000);
    await generations.bump(acme);
    await generations.bump(globex);
    await jest.advanceTimersByTimeAsync(1_000);
    await generations.close();
    expect(inner.counts).toEqual(
      new Map([
        [acme, 2],
        [globex, 2],
      ]),
    );
    expect(inner.closed).toBe(true);
    await jest.advanceTimersByTimeAsync(20_000);
    expect(await generations.current(acme)).toBe(2);
  });

  it('does not repeat with a settle time of 0 (a strongly consistent store)', async () => {
    const inner = new CountingGenerations();
    const generations = new SettlingIndexGenerations(inner, 0);
    await generations.bump(acme);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(await generations.current(acme)).toBe(1);
  });
});
