export interface LatencySummary {
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  qps: number;
}

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Runs `requests` with `concurrency` callers and summarizes the latencies and throughput. */
export async function measure(
  requests: Array<() => Promise<unknown>>,
  concurrency: number,
): Promise<LatencySummary> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const caller = async (): Promise<void> => {
    while (next < requests.length) {
      const request = requests[next++]!;
      const t0 = performance.now();
      await request();
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
  };
}
