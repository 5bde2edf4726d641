import type { EventProducer, RawMessage } from '@kb/kafka';

import type { DocumentConfig } from '../config/document.config';
import { InMemoryDatabase } from '../testing/in-memory.database';
import { InMemoryOutboxRepository } from '../testing/in-memory-outbox.repository';
import { InMemoryTransactionRunner } from '../testing/in-memory-transaction.runner';
import { OutboxRelay } from './outbox.relay';

/** The relay's timing: when it drains, with fake timers and an in-memory outbox. */
describe('OutboxRelay', () => {
  const config = { OUTBOX_POLL_MS: 5_000, OUTBOX_BATCH_MS: 200 } as DocumentConfig;
  let outbox: InMemoryOutboxRepository;
  let transactions: InMemoryTransactionRunner;
  let published: string[];
  let claims: number;
  /** Produce requests made. */
  let requests: number;
  let relay: OutboxRelay;

  const write = (key: string) =>
    transactions.run((trx) =>
      outbox.insert(trx, { topic: 'kb.audit.v1', key, payload: key, headers: {} }),
    );
  /** Lets a drain that timers started run to its end. */
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };

  beforeEach(() => {
    jest.useFakeTimers();
    const db = new InMemoryDatabase();
    outbox = new InMemoryOutboxRepository(db);
    transactions = new InMemoryTransactionRunner(db);
    published = [];
    claims = 0;
    requests = 0;
    const claim = outbox.claim.bind(outbox);
    outbox.claim = (...args) => {
      claims += 1;
      return claim(...args);
    };
    const producer = {
      publishRaw: async (messages: RawMessage[]) => {
        if (messages.length > 0) requests += 1;
        published.push(...messages.map((message) => message.key));
      },
    } as unknown as EventProducer;
    relay = new OutboxRelay(transactions, outbox, producer, config);
  });

  afterEach(async () => {
    await relay.beforeApplicationShutdown();
    jest.useRealTimers();
  });

  it('sends the reads of one window in one drain, OUTBOX_BATCH_MS after the first', async () => {
    for (const key of ['r1', 'r2', 'r3']) {
      await write(key);
      relay.wakeSoon();
    }
    await jest.advanceTimersByTimeAsync(199);
    expect(published).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    await settle();
    expect(published).toEqual(['r1', 'r2', 'r3']);
    expect(claims).toBe(1);
    expect(requests).toBe(1);
  });

  it('polls every OUTBOX_POLL_MS for rows no wake announced, and only then', async () => {
    relay.onApplicationBootstrap();
    await settle();
    expect(claims).toBe(1);
    await write('orphan');
    await jest.advanceTimersByTimeAsync(4_999);
    expect(published).toEqual([]);
    expect(claims).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    await settle();
    expect(published).toEqual(['orphan']);
    expect(claims).toBe(2);
  });

  it('drains at once when woken, and not after it stopped', async () => {
    await write('w1');
    relay.wake();
    await settle();
    expect(published).toEqual(['w1']);

    await write('late');
    relay.wakeSoon();
    await relay.beforeApplicationShutdown();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(published).toEqual(['w1']);
  });
});
