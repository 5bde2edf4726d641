import type { TenantId } from '@kb/contracts';

import type { IndexGenerations } from './index-generations';
import { MirroredIndexGenerations } from './mirrored-index-generations';

const acme = 'acme' as TenantId;

/** Counts bumps per tenant in memory. */
function counting(): IndexGenerations & { close(): Promise<void> } {
  const counts = new Map<TenantId, number>();
  return {
    bump: async (tenantId) => {
      counts.set(tenantId, (counts.get(tenantId) ?? 0) + 1);
      return counts.get(tenantId)!;
    },
    current: async (tenantId) => counts.get(tenantId) ?? 0,
    tenants: async () => [...counts.keys()],
    close: async () => undefined,
  };
}

describe('MirroredIndexGenerations', () => {
  it('raises the mirror with every bump, after the store has it', async () => {
    const inner = counting();
    const raised: Array<[TenantId, number, number]> = [];
    const generations = new MirroredIndexGenerations(inner, {
      raiseGeneration: async (tenantId, generation) =>
        void raised.push([tenantId, generation, await inner.current(tenantId)]),
    });
    expect(await generations.bump(acme)).toBe(1);
    expect(await generations.bump(acme)).toBe(2);
    // Each raise saw the store already at the generation it raised.
    expect(raised).toEqual([
      [acme, 1, 1],
      [acme, 2, 2],
    ]);
    expect(await generations.current(acme)).toBe(2);
  });

  it('still bumps when the mirror fails, and reports the failure', async () => {
    const errors: unknown[] = [];
    const generations = new MirroredIndexGenerations(
      counting(),
      { raiseGeneration: async () => Promise.reject(new Error('redis down')) },
      (error) => errors.push(error),
    );
    expect(await generations.bump(acme)).toBe(1);
    expect(await generations.current(acme)).toBe(1);
    expect(errors).toHaveLength(1);
  });
});
