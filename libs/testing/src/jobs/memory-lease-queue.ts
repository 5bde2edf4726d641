import type { LeaseQueue } from '@kb/jobs';

/** A fake lease queue in memory for unit tests; it passes the conformance suite of the real ones. */
export class MemoryLeaseQueue<T> implements LeaseQueue<{ id: string; payload: T }> {
  private readonly jobs = new Map<string, { payload: T; leasedUntil: number }>();
  private next = 0;

  /** Moves this queue's clock (leases end by it). */
  now = 0;

  add(payload: T): string {
    const id = `job-${++this.next}`;
    this.jobs.set(id, { payload, leasedUntil: -Infinity });
    return id;
  }

  claim(limit: number, leaseMs: number): Promise<Array<{ id: string; payload: T }>> {
    const due = [...this.jobs].filter(([, job]) => job.leasedUntil <= this.now).slice(0, limit);
    for (const [, job] of due) job.leasedUntil = this.now + leaseMs;
    return Promise.resolve(due.map(([id, job]) => ({ id, payload: job.payload })));
  }

  /** The job is settled: it leaves the queue. */
  finish(id: string): void {
    this.jobs.delete(id);
  }

  /** Jobs not yet settled. */
  get size(): number {
    return this.jobs.size;
  }
}
