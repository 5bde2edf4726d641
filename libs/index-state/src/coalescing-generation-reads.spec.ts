import type { TenantId } from '@kb/contracts';

import { CoalescingGenerationReads } from './coalescing-generation-reads';

const T = 't1' as TenantId;

/** A store whose reads the test answers one by one, each with the generation current when it started. */
function gatedStore() {
  let generation = 1;
  const reads: Array<{ startedAt: number; answer: () => void }> = [];
  return {
    bump: () => (generation += 1),
    reads,
    store: {
      current: () =>
        new Promise<number>((resolve) => {
          const startedAt = generation;
          reads.push({ startedAt, answer: () => resolve(startedAt) });
        }),
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('CoalescingGenerationReads', () => {
  it('keeps one read on its way per tenant, sharing the next among callers who came meanwhile', async () => {
    const { store, reads, bump } = gatedStore();
    const coalescing = new CoalescingGenerationReads(store);
    const first = coalescing.current(T);
    expect(reads).toHaveLength(1);
    // Bumped after the first read started: later callers must not get its answer.
    bump();
    const second = coalescing.current(T);
    const third = coalescing.current(T);
    expect(reads).toHaveLength(1);
    reads[0]!.answer();
    expect(await first).toBe(1);
    await tick();
    expect(reads).toHaveLength(2);
    reads[1]!.answer();
    expect(await second).toBe(2);
    expect(await third).toBe(2);
    // Nothing on its way: the next caller starts a read of its own at once.
    const fourth = coalescing.current(T);
    expect(reads).toHaveLength(3);
    reads[2]!.answer();
    expect(await fourth).toBe(2);
  });

  it('passes a failed read to its callers and still serves those waiting with a new read', async () => {
    let calls = 0;
    const coalescing = new CoalescingGenerationReads({
      current: () => (++calls === 1 ? Promise.reject(new Error('db away')) : Promise.resolve(7)),
    });
    const failing = coalescing.current(T);
    const waiting = coalescing.current(T);
    await expect(failing).rejects.toThrow('db away');
    expect(await waiting).toBe(7);
  });
});
