import { toTenantId } from '@kb/contracts';

import { bySize, paceDelayMs } from './access.reconciler';

const row = (id: string, principals: string[]) => ({
  id,
  tenantId: toTenantId('t1'),
  principals,
  metaVersion: 0,
});

describe('bySize', () => {
  it('splits a tenant’s snapshot so no event outgrows the limit, keeping every row once', () => {
    const wide = Array.from({ length: 40 }, (_, i) => `u:reader-${i}`);
    const rows = [row('a', ['u:ann']), row('b', wide), row('c', wide), row('d', ['u:dan'])];
    const parts = bySize(rows, 600);
    expect(parts.map((part) => part.map((r) => r.id))).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(bySize(rows).map((part) => part.length)).toEqual([4]);
    // A single row over the limit still goes, alone.
    expect(bySize([row('x', wide)], 10).map((part) => part.length)).toEqual([1]);
    expect(bySize([])).toEqual([]);
  });
});

describe('paceDelayMs', () => {
  it('waits until the documents sent fit the rate, and not at all without one', () => {
    // 500 documents at 1,000 a second: half a second after the start, less what already passed.
    expect(paceDelayMs(0, 500, 1_000)).toBe(500);
    expect(paceDelayMs(200, 500, 1_000)).toBe(300);
    // Behind the rate already (a slow page): no wait.
    expect(paceDelayMs(900, 500, 1_000)).toBe(0);
    expect(paceDelayMs(0, 5_000, 0)).toBe(0);
  });
});
