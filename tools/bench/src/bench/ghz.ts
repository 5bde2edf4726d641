import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import type { LatencySummary } from './latency';

/**
 * ghz (a Go gRPC load generator) as the benchmark's independent client: the same searches the
 * Node client sends, from a process of its own whose per-call cost is a fraction of grpc-js's,
 * so a pass at concurrency 32 measures the service rather than the client (docs/adr/0029).
 */
export interface GhzOptions {
  /** The ghz binary (scripts/infra/install-tools.sh builds it into $KB_HOME/bin). */
  binary: string;
  /** The folder `kb/v1/kb.proto` is under. */
  protoRoot: string;
  address: string;
  token: string;
}

/** One pass: every request once, in order, spread over `concurrency` workers. */
export interface GhzPass {
  requests: object[];
  concurrency: number;
}

/** The parts of ghz's `--format json` report the benchmark reads. */
export interface GhzReport {
  count: number;
  /** Nanoseconds, like every duration in the report. */
  total: number;
  rps: number;
  statusCodeDistribution?: Record<string, number>;
  errorDistribution?: Record<string, number> | null;
  latencyDistribution?: Array<{ percentage: number; latency: number }> | null;
}

const run = promisify(execFile);

/** gRPC's status name for a call past its deadline, as ghz reports it. */
const DEADLINE_EXCEEDED = 'DeadlineExceeded';

/** Runs one pass of `kb.v1.KnowledgeBase.Search` through ghz and summarizes it. */
export async function ghzSearch(options: GhzOptions, pass: GhzPass): Promise<LatencySummary> {
  const folder = await mkdtemp(join(tmpdir(), 'kb-ghz-'));
  try {
    // A file, not --data: the requests of a pass run to megabytes.
    const data = join(folder, 'requests.json');
    await writeFile(data, JSON.stringify(pass.requests));
    const { stdout } = await run(options.binary, ghzArguments(options, pass, data), {
      maxBuffer: 256 * 1024 * 1024,
    });
    return summarizeGhz(JSON.parse(stdout) as GhzReport, pass.requests.length);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

export function ghzArguments(options: GhzOptions, pass: GhzPass, dataFile: string): string[] {
  return [
    '--insecure',
    '--proto',
    join(options.protoRoot, 'kb/v1/kb.proto'),
    '--import-paths',
    options.protoRoot,
    '--call',
    'kb.v1.KnowledgeBase.Search',
    // ghz takes the array's messages round robin: with --total its length, each is sent once.
    '--data-file',
    dataFile,
    '--metadata',
    JSON.stringify({ authorization: `Bearer ${options.token}` }),
    '--total',
    String(pass.requests.length),
    '--concurrency',
    String(Math.min(pass.concurrency, pass.requests.length)),
    '--connections',
    '1',
    // A search past the service's deadline is timed among the latencies (summarizeGhz).
    '--count-errors',
    '--format',
    'json',
    options.address,
  ];
}

/**
 * The latency percentiles and throughput of a ghz report. A search past the service's deadline
 * (DEADLINE_EXCEEDED) is counted and timed among the latencies (`--count-errors`), as `measure`
 * counts them: a loaded scale's tail, not a broken run. Any other answer but OK fails the pass: a
 * benchmark of errors measures nothing.
 */
export function summarizeGhz(report: GhzReport, expected: number): LatencySummary {
  const codes = report.statusCodeDistribution ?? {};
  const late = codes[DEADLINE_EXCEEDED] ?? 0;
  const failed = Object.entries(codes).filter(
    ([code]) => code !== 'OK' && code !== DEADLINE_EXCEEDED,
  );
  const errors = Object.entries(report.errorDistribution ?? {}).filter(
    ([error]) => !error.includes(`code = ${DEADLINE_EXCEEDED}`),
  );
  if (failed.length > 0 || errors.length > 0 || (codes['OK'] ?? 0) + late !== expected) {
    const detail = [...failed, ...errors].map(([what, n]) => `${what} × ${n}`).join(', ');
    throw new Error(
      `ghz: ${codes['OK'] ?? 0} of ${expected} searches answered OK${detail ? ` (${detail})` : ''}`,
    );
  }
  const at = (percentage: number): number => {
    const entry = report.latencyDistribution?.find((d) => d.percentage === percentage);
    if (!entry) throw new Error(`ghz: the report has no p${percentage}`);
    return Math.round(entry.latency / 1e4) / 100;
  };
  return {
    p50_ms: at(50),
    p95_ms: at(95),
    p99_ms: at(99),
    qps: Math.round(report.rps * 100) / 100,
    ...(late > 0 ? { deadline_exceeded: late } : {}),
  };
}

/**
 * The searches query-service answered from its result cache, from its Prometheus text
 * (`kb_search_requests_total{cache="hit"}`, summed over modes): the benchmark checks with it that
 * a hit pass was served from the cache and a miss pass was not.
 */
export function cacheHitsIn(metrics: string): number {
  let hits = 0;
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('kb_search_requests_total{') || !line.includes('cache="hit"')) continue;
    hits += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return hits;
}
