/** Where a failed run is reported (a Nest `Logger` fits). */
export interface TaskLogger {
  error(message: string): void;
}

/**
 * Runs `task` every `intervalMs` (0: never), one run at a time: a tick that finds the previous run
 * still going is skipped. A failed run is logged and the next tick tries again. `stop` waits for a
 * run in progress, so a service can shut down cleanly.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly task: () => Promise<unknown>,
    private readonly logger: TaskLogger,
  ) {}

  /** Whether `stop` was called: long runs check it between steps. */
  get stopping(): boolean {
    return this.stopped;
  }

  start(): void {
    if (this.intervalMs === 0) return;
    this.timer = setInterval(() => {
      if (this.stopped) return;
      this.running ??= this.task()
        .catch((error: unknown) => this.logger.error(`${this.name} failed: ${String(error)}`))
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }
}

/**
 * A `PeriodicTask` for a service's lifetime: started once the application has started, stopped
 * (its run in progress awaited) before it shuts down. The two hooks are Nest's lifecycle methods
 * by name; nothing here imports Nest.
 */
export abstract class ScheduledTask {
  private readonly task: PeriodicTask;

  protected constructor(
    name: string,
    intervalMs: number,
    run: () => Promise<unknown>,
    logger: TaskLogger,
  ) {
    this.task = new PeriodicTask(name, intervalMs, run, logger);
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }
}
