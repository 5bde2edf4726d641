import type { LeaseQueue } from '../../src';

/** One queue under test, emptied for each test; jobs other tests or suites left are ignored. */
export interface LeaseQueueHarness<J> {
  queue: LeaseQueue<J>;
  /** Makes `count` new jobs, due now; answers their ids. */
  add(count: number): Promise<string[]>;
  idOf(job: J): string;
  /** Settles a claimed job for good, the way its handler does when it succeeds. */
  finish(job: J): Promise<void>;
  /** Lets `ms` pass for the queue's leases: a fake clock moves, or the test sleeps. */
  elapse(ms: number): Promise<void>;
}

/**
 * The contract every lease queue keeps (docs/adr/0049); each queue's test file runs it against
 * its real table. `make` is called once per test.
 */
export function leaseQueueConformance<J>(make: () => Promise<LeaseQueueHarness<J>>): void {
  const LONG = 60_000;
  /** Claims and keeps only the jobs of `ids` (another suite's jobs may share the table). */
  const claimOf = async (h: LeaseQueueHarness<J>, ids: string[], limit: number, leaseMs: number) =>
    (await h.queue.claim(limit, leaseMs)).filter((job) => ids.includes(h.idOf(job)));

  it('hands out each due job once while its lease lasts', async () => {
    const h = await make();
    const ids = await h.add(3);
    const first = await claimOf(h, ids, 10, LONG);
    expect(first.map(h.idOf).sort()).toEqual([...ids].sort());
    expect(await claimOf(h, ids, 10, LONG)).toEqual([]);
  });

  it('claims no more than the limit, and the rest on the next claim', async () => {
    const h = await make();
    const ids = await h.add(5);
    const first = await claimOf(h, ids, 2, LONG);
    expect(first).toHaveLength(2);
    const rest = await claimOf(h, ids, 10, LONG);
    expect([...first, ...rest].map(h.idOf).sort()).toEqual([...ids].sort());
  });

  it('gives every job to exactly one of several claimers racing', async () => {
    const h = await make();
    const ids = await h.add(24);
    const claims = await Promise.all([1, 2, 3, 4].map(() => claimOf(h, ids, 24, LONG)));
    const claimed = claims.flat().map(h.idOf);
    expect(claimed.sort()).toEqual([...ids].sort());
  });

  it('hands a job out again once its lease has ended unsettled (its holder died)', async () => {
    const h = await make();
    const [id] = await h.add(1);
    expect((await claimOf(h, [id!], 1, 300)).map(h.idOf)).toEqual([id]);
    expect(await claimOf(h, [id!], 1, 300)).toEqual([]);
    await h.elapse(600);
    expect((await claimOf(h, [id!], 1, LONG)).map(h.idOf)).toEqual([id]);
  });

  it('never hands out a settled job again', async () => {
    const h = await make();
    const ids = await h.add(2);
    const claimed = await claimOf(h, ids, 2, 300);
    expect(claimed).toHaveLength(2);
    await h.finish(claimed[0]!);
    await h.elapse(600);
    const again = await claimOf(h, ids, 10, LONG);
    expect(again.map(h.idOf)).toEqual([h.idOf(claimed[1]!)]);
  });
}
