import { Topics } from '@kb/contracts';

import type { OutboxRepository } from '../../src/outbox/outbox.repository';
import type { TransactionRunner } from '../../src/platform/transaction.runner';

/** What the suite drives: the repository, and the runner its `trx` methods take part in. */
export interface OutboxConformanceHarness {
  outbox: OutboxRepository;
  transactions: TransactionRunner;
}

/**
 * What `SqlOutboxRepository` (test/outbox.int-spec.ts, Postgres) and `InMemoryOutboxRepository`
 * (unit tier) share: the two lanes (audit records after every other message), insertion order
 * within each, deletes and the backlog. Each test starts from an empty outbox.
 */
export function outboxRepositoryConformance(harness: () => OutboxConformanceHarness): void {
  let h: OutboxConformanceHarness;
  const message = (topic: string, key: string) => ({
    topic,
    key,
    payload: JSON.stringify({ key }),
    headers: { traceparent: `00-${key}` },
  });
  const claim = (limit: number) => h.transactions.run((trx) => h.outbox.claim(trx, limit));

  beforeEach(async () => {
    h = harness();
    const left = await claim(1_000_000);
    await h.transactions.run((trx) =>
      h.outbox.delete(
        trx,
        left.map((m) => m.id),
      ),
    );
  });

  it('claims every other message before audit records written earlier, each lane in order', async () => {
    await h.transactions.run((trx) =>
      h.outbox.insertMany(trx, [
        ...Array.from({ length: 5 }, (_, i) => message(Topics.audit, `audit-${i}`)),
        message(Topics.document, 'doc-1'),
        message(Topics.audit, 'audit-late'),
        message(Topics.collection, 'kb-1'),
        message(Topics.document, 'doc-2'),
      ]),
    );
    expect((await claim(5)).map((m) => m.key)).toEqual([
      'doc-1',
      'kb-1',
      'doc-2',
      'audit-0',
      'audit-1',
    ]);
  });

  it('keeps what was written, deletes what was published, and counts the rest', async () => {
    await h.transactions.run(async (trx) => {
      await h.outbox.insert(trx, message(Topics.document, 'a'));
      await h.outbox.insert(trx, message(Topics.document, 'b'));
    });
    const [first, second] = await claim(10);
    expect(first).toEqual({ id: expect.any(String), ...message(Topics.document, 'a') });
    expect(second?.key).toBe('b');
    expect(await h.outbox.backlog()).toBe(2);
    await h.transactions.run((trx) => h.outbox.delete(trx, [first!.id]));
    expect(await h.outbox.backlog()).toBe(1);
    expect((await claim(10)).map((m) => m.key)).toEqual(['b']);
  });

  it('writes nothing when the unit of work fails', async () => {
    await expect(
      h.transactions.run(async (trx) => {
        await h.outbox.insert(trx, message(Topics.document, 'lost'));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await h.outbox.backlog()).toBe(0);
  });
}
