import { status } from '@grpc/grpc-js';

export interface LatencySummary {
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  qps: number;
  /**
   * Requests the service answered DEADLINE_EXCEEDED (past its search budget, docs/adr/0042):
   * counted, and their time kept among the latencies. Absent when none was.
   */
  deadline_exceeded?: number;
}

const pastDeadline = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === status.DEADLINE_EXCEEDED;

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/**
 * Runs `requests` with `concurrency` callers and summarizes the latencies and throughput. A
 * request past the service's deadline is counted and timed (a loaded scale's tail, not a broken
 * run); any other failure stops the measure.
 */
export async function measure(
  requests: Array<() => Promise<unknown>>,
  concurrency: number,
): Promise<LatencySummary> {
  const latencies: number[] = [];
  let deadlineExceeded = 0;
  let next = 0;
  const started = performance.now();
  const caller = async (): Promise<void> => {
    while (next < requests.length) {
      const request = requests[next++]!;
      const t0 = performance.now();
      try {
        await request();
      } catch (error) {
        if (!pastDeadline(error)) throw error;
        deadlineExceeded++;
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, requests.length) }, caller));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const round = (x: number): number => Math.round(x * 100) / 100;
  return {
    p50_ms: round(percentile(latencies, 50)),
    p95_ms: round(percentile(latencies, 95)),
    p99_ms: round(percentile(latencies, 99)),
    qps: round(requests.length / seconds),
    ...(deadlineExceeded > 0 ? { deadline_exceeded: deadlineExceeded } : {}),
  };
}

export interface StageSummary {
  p50_ms: number;
  p95_ms: number;
  /** Requests that reported the stage (a hit reports no retrieval stages, for one). */
  count: number;
}

/**
 * The per-stage times the service reported (its Server-Timing header) for each request of a
 * pass, summarized per stage: where a search spends its time, as the service saw it.
 */
export class StageSamples {
  private readonly samples = new Map<string, number[]>();
  private readonly requests: Array<Map<string, number>> = [];

  readonly record = (stages: Array<{ name: string; ms: number }>): void => {
    this.requests.push(new Map(stages.map(({ name, ms }) => [name, ms])));
    for (const { name, ms } of stages) {
      const list = this.samples.get(name) ?? [];
      list.push(ms);
      this.samples.set(name, list);
    }
  };

  /**
   * Where the tail goes: over the requests whose `total` stage is at or above its p95, each
   * stage's mean (a stage a request did not report counts 0). Empty without a `total`.
   */
  slowest(): Record<string, number> {
    const timed = this.requests.filter((stages) => stages.has('total'));
    if (timed.length === 0) return {};
    const totals = timed.map((stages) => stages.get('total')!).sort((a, b) => a - b);
    const line = percentile(totals, 95);
    const tail = timed.filter((stages) => stages.get('total')! >= line);
    const names = new Set(tail.flatMap((stages) => [...stages.keys()]));
    const round = (x: number): number => Math.round(x * 100) / 100;
    return Object.fromEntries(
      [...names].map((name) => [
        name,
        round(tail.reduce((sum, stages) => sum + (stages.get(name) ?? 0), 0) / tail.length),
      ]),
    );
  }

  summary(): Record<string, StageSummary> {
    const round = (x: number): number => Math.round(x * 100) / 100;
    return Object.fromEntries(
      [...this.samples].map(([name, list]) => {
        const sorted = [...list].sort((a, b) => a - b);
        return [
          name,
          {
            p50_ms: round(percentile(sorted, 50)),
            p95_ms: round(percentile(sorted, 95)),
            count: sorted.length,
          },
        ];
      }),
    );
  }
}
