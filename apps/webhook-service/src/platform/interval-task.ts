import type { Logger } from '@nestjs/common';

/**
 * Runs `work` every `intervalMs`, never two at once: a tick that finds the last run still going
 * skips. `stop` ends the ticks and waits for the run in flight. A failed run is logged; the next
 * tick tries again.
 */
export class IntervalTask {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly what: string,
    private readonly intervalMs: number,
    private readonly work: () => Promise<unknown>,
    private readonly logger: Pick<Logger, 'error'>,
  ) {}

  /** Whether `stop` was called: long runs check it between steps. */
  get stopping(): boolean {
    return this.stopped;
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private tick(): void {
    if (this.running || this.stopped) return;
    this.running = this.work()
      .then(() => undefined)
      .catch((error: unknown) => this.logger.error(`${this.what} failed: ${String(error)}`))
      .finally(() => (this.running = undefined));
  }
}
