import { type TopicEnvelope, Topics } from '@kb/contracts';

import { concurrentBatchHandler } from './concurrent-batch';

type P = typeof Topics.documentParsed;
type Parsed = TopicEnvelope<P>;

const event = (documentId: string, chunkCount = 1, version = 1): Parsed =>
  ({ tenantId: 't1', payload: { documentId, version, chunkCount } }) as unknown as Parsed;

/** A handler whose calls stay open until released, recording starts and what ran at once. */
function gate() {
  const started: Parsed[] = [];
  const open = new Map<Parsed, { resolve: () => void; reject: (error: Error) => void }>();
  let running = 0;
  let peak = 0;
  const handler = (e: Parsed) =>
    new Promise<void>((resolve, reject) => {
      started.push(e);
      running += 1;
      peak = Math.max(peak, running);
      open.set(e, {
        resolve: () => {
          running -= 1;
          open.delete(e);
          resolve();
        },
        reject: (error) => {
          running -= 1;
          open.delete(e);
          reject(error);
        },
      });
    });
  return { handler, started, open, peak: () => peak };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('concurrentBatchHandler', () => {
  it('overlaps events of different keys up to the budget, one key in order', async () => {
    const { handler, started, open, peak } = gate();
    const a1 = event('a', 1, 1);
    const a2 = event('a', 1, 2);
    const b = event('b');
    const c = event('c');
    const d = event('d');
    const batch = concurrentBatchHandler<P>(handler, {
      keyOf: (e) => e.payload.documentId,
      budget: 3,
    });
    const whole = batch([a1, a2, b, c, d]);
    await tick();
    // a2 waits for a1 (same document); the budget of 3 holds d back.
    expect(started).toEqual([a1, b, c]);
    open.get(a1)!.resolve();
    await tick();
    expect(started).toEqual([a1, b, c, a2]);
    open.get(b)!.resolve();
    await tick();
    expect(started).toEqual([a1, b, c, a2, d]);
    for (const pending of [...open.values()]) pending.resolve();
    await whole;
    expect(peak()).toBe(3);
  });

  it('weighs events (chunks in flight), letting a heavy one run alone', async () => {
    const { handler, started, open } = gate();
    const small = event('s', 2);
    const heavy = event('h', 100);
    const next = event('n', 2);
    const batch = concurrentBatchHandler<P>(handler, {
      keyOf: (e) => e.payload.documentId,
      weightOf: (e) => e.payload.chunkCount,
      budget: 10,
    });
    const whole = batch([small, heavy, next]);
    await tick();
    expect(started).toEqual([small]);
    open.get(small)!.resolve();
    await tick();
    expect(started).toEqual([small, heavy]);
    open.get(heavy)!.resolve();
    await tick();
    expect(started).toEqual([small, heavy, next]);
    open.get(next)!.resolve();
    await whole;
  });

  it('after a failure starts nothing new, waits for the running ones, throws; a retry skips what succeeded', async () => {
    const { handler, started, open } = gate();
    const [a, b, c] = [event('a'), event('b'), event('c')];
    const batch = concurrentBatchHandler<P>(handler, {
      keyOf: (e) => e.payload.documentId,
      budget: 2,
    });
    const events = [a, b, c];
    let settled = false;
    const first = batch(events).finally(() => {
      settled = true;
    });
    await tick();
    expect(started).toEqual([a, b]);
    open.get(a)!.reject(new Error('S3 is away'));
    await tick();
    expect(started).toEqual([a, b]); // c is not started
    expect(settled).toBe(false); // b is still running
    open.get(b)!.resolve();
    await expect(first).rejects.toThrow('S3 is away');

    started.length = 0;
    const retry = batch(events);
    await tick();
    expect(started).toEqual([a, c]); // b succeeded in the first try
    for (const pending of [...open.values()]) pending.resolve();
    await retry;
  });

  it('turns a handler that throws at once into a failed batch', async () => {
    const batch = concurrentBatchHandler<P>(
      () => {
        throw new Error('sync failure');
      },
      { keyOf: (e) => e.payload.documentId, budget: 4 },
    );
    await expect(batch([event('a')])).rejects.toThrow('sync failure');
  });

  it('handles an empty batch', async () => {
    const handler = jest.fn(async () => undefined);
    await concurrentBatchHandler<P>(handler, { keyOf: () => 'k', budget: 1 })([]);
    expect(handler).not.toHaveBeenCalled();
  });
});
