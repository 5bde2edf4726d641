import { PeriodicTask, type TaskLogger } from '@kb/timing';

import type { LeaseQueue } from './lease-queue';

export interface QueueWorkerOptions {
  /** Names the worker in its logs. */
  name: string;
  /** Jobs in flight at once. */
  concurrency: number;
  /** How long a claimed job stays the worker's: longer than its handler can take. */
  leaseMs: number;
  /**
   * How often an idle worker looks for due jobs (0: never, then only `drain` runs it). While jobs
   * are in flight it also looks whenever one ends.
   */
  pollMs: number;
  /** Told after each pass that claimed jobs how many it claimed (a log line, a metric). */
  onPass?: (claimed: number) => void;
}

/**
 * Drains a `LeaseQueue` through a pool of `concurrency` slots: it claims as many due jobs as
 * slots are free, starts each on its own, refills a slot as soon as its job ends (a slow job holds
 * one slot, not a batch), and stops when nothing is due and nothing is in flight. A handler that
 * throws is logged; its job's lease runs out and it is claimed again. `stop` stops claiming and
 * waits for the jobs in flight.
 */
export class QueueWorker<J> {
  private readonly task: PeriodicTask;
  private readonly passes = new Set<Promise<number>>();

  constructor(
    private readonly queue: LeaseQueue<J>,
    private readonly handle: (job: J) => Promise<void>,
    private readonly options: QueueWorkerOptions,
    private readonly logger: TaskLogger,
  ) {
    this.task = new PeriodicTask(options.name, options.pollMs, () => this.drain(), logger);
  }

  /** Whether `stop` was called: long handlers may check it between steps. */
  get stopping(): boolean {
    return this.task.stopping;
  }

  start(): void {
    this.task.start();
  }

  async stop(): Promise<void> {
    await this.task.stop();
    await this.idle();
  }

  /** Resolves when every pass in progress (and the jobs it started) has ended. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.passes]);
  }

  /**
   * Runs due jobs until none is due and none is in flight (or `stop`); returns how many it
   * claimed. A claim that fails ends the pass once the jobs already started have ended.
   */
  drain(): Promise<number> {
    const pass = this.pass().then((claimed) => {
      if (claimed > 0) this.options.onPass?.(claimed);
      return claimed;
    });
    this.passes.add(pass);
    return pass.finally(() => this.passes.delete(pass));
  }

  private async pass(): Promise<number> {
    const { concurrency, leaseMs, pollMs, name } = this.options;
    const inFlight = new Set<Promise<void>>();
    let claimedTotal = 0;
    let ended = wakeUp();
    try {
      while (!this.stopping) {
        const free = concurrency - inFlight.size;
        const claimed = free > 0 ? await this.queue.claim(free, leaseMs) : [];
        for (const job of claimed) {
          const run: Promise<void> = this.handle(job)
            .catch((error: unknown) =>
              this.logger.error(`${name}: a job failed and is due again later: ${String(error)}`),
            )
            .finally(() => {
              inFlight.delete(run);
              ended.fire();
            });
          inFlight.add(run);
        }
        claimedTotal += claimed.length;
        if (inFlight.size === 0 && claimed.length === 0) break;
        // The pool is full or nothing more is due now: wait for a job to end, or the next look.
        await ended.within(pollMs > 0 ? pollMs : leaseMs);
        ended = wakeUp();
      }
    } finally {
      await Promise.all(inFlight);
    }
    return claimedTotal;
  }
}

/** A one-shot wake-up: `fire` ends `within`'s wait early, even when it fired before the wait. */
function wakeUp(): { fire(): void; within(ms: number): Promise<void> } {
  let fired = false;
  let wake = (): void => undefined;
  return {
    fire() {
      fired = true;
      wake();
    },
    within(ms) {
      if (fired) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}
