import { AsyncLocalStorage } from 'node:async_hooks';

/** One stage of a request and how long it took, in milliseconds (wall clock). */
export interface StageTiming {
  name: string;
  ms: number;
}

/**
 * The stages of one request, in the order they finished. Stages may overlap (the query embedding
 * runs while the index spaces are read, vector search beside BM25), so their durations do not add
 * up to the request's; `total` is recorded by whoever reports them.
 */
export class StageTimings {
  private readonly stages: StageTiming[] = [];

  add(name: string, ms: number): void {
    this.stages.push({ name, ms });
  }

  list(): readonly StageTiming[] {
    return this.stages;
  }

  /**
   * The W3C Server-Timing header value (`name;dur=12.3, other;dur=0.4`), durations rounded to
   * 0.01 ms. Names are HTTP tokens: the stages are named by the code, never by input.
   */
  header(): string {
    return this.stages
      .map(({ name, ms }) => `${name};dur=${Math.round(ms * 100) / 100}`)
      .join(', ');
  }
}

const current = new AsyncLocalStorage<StageTimings>();

/**
 * Runs `fn` with a fresh set of stage timings that `timedStage` calls inside it (across awaits)
 * record into; returns fn's result and the timings.
 */
export async function collectStageTimings<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; timings: StageTimings }> {
  const timings = new StageTimings();
  const result = await current.run(timings, fn);
  return { result, timings };
}

/**
 * Runs `fn` and records how long it took as stage `name` of the request being timed (see
 * `collectStageTimings`), whether it succeeded or failed; outside a timed request it only runs
 * `fn`. Costs two clock reads.
 */
export async function timedStage<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const timings = current.getStore();
  if (!timings) return fn();
  const started = performance.now();
  try {
    return await fn();
  } finally {
    timings.add(name, performance.now() - started);
  }
}

/** A Server-Timing header value read back (`parseServerTiming('a;dur=1.5, b')` → a: 1.5, b: 0). */
export function parseServerTiming(value: string): StageTiming[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [name = '', ...params] = entry.split(';').map((part) => part.trim());
      const dur = params.find((param) => param.toLowerCase().startsWith('dur='));
      const ms = dur ? Number(dur.slice(4)) : 0;
      return { name, ms: Number.isFinite(ms) ? ms : 0 };
    });
}
