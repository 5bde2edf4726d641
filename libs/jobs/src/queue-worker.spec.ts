import type { LeaseQueue } from './lease-queue';
import { QueueWorker } from './queue-worker';

/** A queue that hands out its jobs in order, once, and counts its claims. */
class ListQueue implements LeaseQueue<number> {
  claims: number[] = [];
  constructor(private readonly jobs: number[]) {}
  claim(limit: number): Promise<number[]> {
    this.claims.push(limit);
    return Promise.resolve(this.jobs.splice(0, limit));
  }
}

const logger = { error: jest.fn() };
const options = { name: 'test', concurrency: 3, leaseMs: 1_000, pollMs: 0 };

/** A job that ends when the test says so. */
function gate(): { wait: Promise<void>; open(): void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe('QueueWorker', () => {
  beforeEach(() => logger.error.mockClear());

  it('runs every due job and answers how many it claimed', async () => {
    const done: number[] = [];
    const worker = new QueueWorker(
      new ListQueue([1, 2, 3, 4, 5, 6, 7]),
      async (job) => void done.push(job),
      options,
      logger,
    );
    expect(await worker.drain()).toBe(7);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('keeps no more than `concurrency` jobs in flight, refilling a slot as soon as one ends', async () => {
    const gates = new Map<number, ReturnType<typeof gate>>();
    let inFlight = 0;
    let most = 0;
    const queue = new ListQueue([1, 2, 3, 4, 5]);
    const worker = new QueueWorker(
      queue,
      async (job) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        const g = gate();
        gates.set(job, g);
        await g.wait;
        inFlight -= 1;
      },
      options,
      logger,
    );
    const draining = worker.drain();
    await new Promise((resolve) => setImmediate(resolve));
    expect([...gates.keys()]).toEqual([1, 2, 3]);
    gates.get(2)!.open();
    await new Promise((resolve) => setImmediate(resolve));
    // One slot freed: one more job claimed, while 1 and 3 still run.
    expect([...gates.keys()]).toEqual([1, 2, 3, 4]);
    expect(queue.claims.slice(0, 2)).toEqual([3, 1]);
    for (const g of gates.values()) g.open();
    await new Promise((resolve) => setImmediate(resolve));
    for (const g of gates.values()) g.open();
    expect(await draining).toBe(5);
    expect(most).toBe(3);
  });

  it('logs a job that throws and goes on with the others', async () => {
    const done: number[] = [];
    const worker = new QueueWorker(
      new ListQueue([1, 2, 3]),
      async (job) => {
        if (job === 2) throw new Error('receiver down');
        done.push(job);
      },
      options,
      logger,
    );
    expect(await worker.drain()).toBe(3);
    expect(done.sort()).toEqual([1, 3]);
    expect(logger.error).toHaveBeenCalledWith(expect.stringContaining('receiver down'));
  });

  it('stops claiming on stop, and stop waits for the jobs in flight', async () => {
    const g = gate();
    let finished = false;
    const queue = new ListQueue([1, 2, 3, 4, 5, 6]);
    const worker = new QueueWorker(
      queue,
      async () => {
        await g.wait;
        finished = true;
      },
      { ...options, pollMs: 10 },
      logger,
    );
    const draining = worker.drain();
    await new Promise((resolve) => setImmediate(resolve));
    const stopped = worker.stop();
    g.open();
    await stopped;
    expect(finished).toBe(true);
    expect(await draining).toBe(3);
    expect(queue.claims).toEqual([3]);
  });
});
