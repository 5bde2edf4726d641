import type { Logger } from '@nestjs/common';

/**
 * Runs `task` every `intervalMs` (0: never), one run at a time: a tick that finds the previous run
 * still going is skipped. A failed run is logged and the next tick tries again. `stop` waits for a
 * run in progress, so a service can shut down cleanly.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly task: () => Promise<unknown>,
    private readonly logger: Pick<Logger, 'error'>,
  ) {}

  start(): void {
    if (this.intervalMs === 0) return;
    this.timer = setInterval(() => {
      this.running ??= this.task()
        .catch((error: unknown) => this.logger.error(`${this.name} failed: ${String(error)}`))
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
