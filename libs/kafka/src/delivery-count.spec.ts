import { backoffDelay } from '@kb/timing';
import type { Admin } from 'kafkajs';

import { type CommitOffset, DeliveryCounter, parseDeliveries } from './delivery-count';

/** A group's committed offsets, as the broker keeps them, behind the two calls the counter uses. */
function fakeGroup() {
  const committed = new Map<number, { offset: string; metadata: string | null }>();
  const admin = {
    fetchOffsets: async () => [
      {
        topic: 't',
        partitions: [...committed].map(([partition, c]) => ({ partition, ...c })),
      },
    ],
  } as unknown as Admin;
  const commit: CommitOffset = async ({ topics }) => {
    for (const { partitions } of topics) {
      for (const p of partitions) {
        committed.set(p.partition, { offset: p.offset, metadata: p.metadata ?? null });
      }
    }
  };
  return { admin, commit, committed };
}

describe('DeliveryCounter', () => {
  it('counts deliveries of one offset across counters (processes), and restarts at a new one', async () => {
    const group = fakeGroup();
    expect(await new DeliveryCounter(group.admin, 'g').begin('t', 0, '7', group.commit)).toBe(1);
    expect(await new DeliveryCounter(group.admin, 'g').begin('t', 0, '7', group.commit)).toBe(2);
    const counter = new DeliveryCounter(group.admin, 'g');
    expect(await counter.begin('t', 0, '7', group.commit)).toBe(3);
    expect(await counter.begin('t', 0, '8', group.commit)).toBe(1);
    expect(group.committed.get(0)).toEqual({ offset: '8', metadata: 'kb-deliveries=1' });
  });

  it('takes a delivery back that ended in a transient wait instead of a crash', async () => {
    const group = fakeGroup();
    const counter = new DeliveryCounter(group.admin, 'g');
    await counter.begin('t', 1, '3', group.commit);
    await counter.begin('t', 1, '3', group.commit);
    await counter.forgive('t', 1, '3', group.commit);
    expect(await new DeliveryCounter(group.admin, 'g').begin('t', 1, '3', group.commit)).toBe(2);
  });

  it('reads a count only from its own metadata', () => {
    expect(parseDeliveries('kb-deliveries=4')).toBe(4);
    expect(parseDeliveries(null)).toBe(0);
    expect(parseDeliveries('')).toBe(0);
    expect(parseDeliveries('kb-deliveries=x')).toBe(0);
    expect(parseDeliveries('someone else')).toBe(0);
  });
});

describe('backoffDelay', () => {
  it('grows exponentially and stays within the cap', () => {
    for (let attempt = 1; attempt < 60; attempt++) {
      const delay = backoffDelay(attempt, { initialMs: 100, maxMs: 30_000 });
      const ceiling = Math.min(30_000, 100 * 2 ** (attempt - 1));
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});
