import { PeriodicTask, ScheduledTask } from './periodic';

describe('PeriodicTask', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs every interval, one run at a time, and survives a failed run', async () => {
    const errors: string[] = [];
    let runs = 0;
    let release: () => void = () => undefined;
    const task = new PeriodicTask(
      'job',
      100,
      () => {
        runs++;
        if (runs === 1) return Promise.reject(new Error('boom'));
        return new Promise<void>((resolve) => (release = resolve));
      },
      { error: (message: string) => void errors.push(message) },
    );
    task.start();
    await jest.advanceTimersByTimeAsync(100);
    expect(errors).toEqual(['job failed: Error: boom']);
    await jest.advanceTimersByTimeAsync(100); // second run starts and hangs
    await jest.advanceTimersByTimeAsync(300); // ticks while it runs are skipped
    expect(runs).toBe(2);
    const stopped = task.stop();
    release();
    await stopped;
    await jest.advanceTimersByTimeAsync(500);
    expect(runs).toBe(2);
  });

  it('never runs with an interval of 0', async () => {
    let runs = 0;
    const task = new PeriodicTask('job', 0, async () => void runs++, { error: () => undefined });
    task.start();
    // A 0 ms interval would fire on every tick of this window: nothing is scheduled at all.
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(0);
    await task.stop();
  });
});

describe('ScheduledTask', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  class Ticker extends ScheduledTask {
    runs = 0;
    constructor(intervalMs: number) {
      super('ticker', intervalMs, async () => void this.runs++, { error: () => undefined });
    }
  }

  it('runs from application start until shutdown, and not at all with interval 0', async () => {
    const ticker = new Ticker(100);
    await jest.advanceTimersByTimeAsync(300);
    expect(ticker.runs).toBe(0); // not before the application started
    ticker.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(300);
    expect(ticker.runs).toBe(3);
    await ticker.beforeApplicationShutdown();
    await jest.advanceTimersByTimeAsync(300);
    expect(ticker.runs).toBe(3);
    const off = new Ticker(0);
    off.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(300);
    expect(off.runs).toBe(0);
  });
});
