import { TransactionRunner, Trx } from '../platform/transaction.runner';
import type { InMemoryDatabase } from './in-memory.database';

export class InMemoryTrx extends Trx {
  open = true;

  constructor(readonly id: number) {
    super();
  }
}

/** The in-memory transaction behind `trx`, which must still be open. */
export function openTrx(trx: Trx): InMemoryTrx {
  if (!(trx instanceof InMemoryTrx))
    throw new Error('not a transaction of InMemoryTransactionRunner');
  if (!trx.open) throw new Error(`transaction ${trx.id} is over: a write escaped its unit of work`);
  return trx;
}

/**
 * Runs units of work one at a time (so they are isolated from each other), snapshotting the
 * database first and restoring it when the work throws. Units of work do not nest.
 */
export class InMemoryTransactionRunner extends TransactionRunner {
  committed = 0;
  rolledBack = 0;
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  run<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    const result = this.queue.then(() => this.runNow(work));
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** The same isolation as `run`: in memory there are no round trips to save. */
  statement<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    return this.run(work);
  }

  private async runNow<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    const restore = this.db.snapshot();
    const trx = new InMemoryTrx(this.nextId++);
    try {
      const result = await work(trx);
      this.committed += 1;
      return result;
    } catch (error) {
      restore();
      this.rolledBack += 1;
      throw error;
    } finally {
      trx.open = false;
    }
  }
}
