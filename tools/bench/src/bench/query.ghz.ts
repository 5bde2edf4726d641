import { cacheHitsIn, type GhzOptions, ghzSearch } from './ghz';
import { cpuMs, cpuPerUnit, serverCpuMs } from './ingest.bench';
import type { LatencySummary } from './latency';
import type { QueryBenchOptions } from './query.bench';

/** Hits a benchmark search asks for. */
export const TOP_K = 10;
/** ghz's hit passes ask every query this many times more than `--rounds`: at 2,000 a second, 228 hits are gone in a tenth of a second. */
const GHZ_HIT_ROUNDS_FACTOR = 30;
/** The share of a hit pass's searches that may miss the cache (counted, not failed). */
const MISSED_HITS_TOLERATED = 0.01;

/**
 * A ghz pass's latency; the hit passes' searches the cache did not answer; and the CPU time each
 * service and local server used per search while the pass ran (ms), which says where a miss's
 * cost outside the model goes at c32. The servers are the machine's: anything else using them
 * meanwhile counts too.
 */
export type PassSummary = LatencySummary & {
  cache_misses?: number;
  cpu_ms_per_search?: Record<string, number>;
};

/** CPU time used so far by each service of this checkout and each local server, in ms. */
async function cpuReading(): Promise<Record<string, number>> {
  const [services, servers] = await Promise.all([cpuMs(), serverCpuMs()]);
  return { ...services, ...servers };
}

/** A search as the ghz passes send it. */
const request = (query: string, rerank = false) => ({
  query,
  topK: TOP_K,
  mode: 'SEARCH_MODE_HYBRID',
  ...(rerank ? { rerank: true } : {}),
});

/** The hit passes' searches: `rounds` × GHZ_HIT_ROUNDS_FACTOR asks of each cached text. */
export function hitRequests(queries: string[], run: string, rounds: number): object[] {
  const cached = queries.map((q) => request(`${q} (${run} ghz hit)`));
  return Array.from({ length: rounds * GHZ_HIT_ROUNDS_FACTOR }, () => cached).flat();
}

/**
 * The miss and hit passes at concurrency 1 and 32 again, sent by ghz (docs/adr/0029): misses with
 * query texts no other pass used, hits with the texts the hit passes cached (`rounds` ×
 * GHZ_HIT_ROUNDS_FACTOR of them, so the pass lasts long enough to measure).
 */
export async function independentPasses(
  ghz: GhzOptions,
  queries: string[],
  run: string,
  options: Pick<QueryBenchOptions, 'rounds' | 'log' | 'queryUrl'>,
): Promise<{
  tool: 'ghz';
  miss: Record<'c1' | 'c32', PassSummary>;
  hit: Record<'c1' | 'c32', PassSummary>;
  rerank_miss: Record<'c1', PassSummary>;
}> {
  const misses = (c: number) =>
    Array.from({ length: options.rounds }, (_, round) =>
      queries.map((q) => request(`${q} (${run} ghz c${c} ${round})`)),
    ).flat();
  // Asked here first (a pass of misses), so the hit passes find them within the cache's TTL
  // (300 s): at ×500 the passes since the plain queries were cached outlast it.
  const cached = queries.map((q) => request(`${q} (${run} ghz hit)`));
  const hits = hitRequests(queries, run, options.rounds);
  // ghz does not read the answers, so query-service's own count says what each pass was.
  const cacheHits = async (): Promise<number | undefined> => {
    if (!options.queryUrl) return undefined;
    const response = await fetch(new URL('/metrics', options.queryUrl));
    return cacheHitsIn(await response.text());
  };
  // A hit pass may find a few entries gone (at ×500, 16 of 6,840 at c32 once, after its c1 pass
  // had found all 6,840): up to 1 % are counted (`cache_misses`), more fail the pass.
  const pass = async (
    name: string,
    requests: object[],
    concurrency: number,
    expectedHits: (sent: number) => number,
  ) => {
    const before = await cacheHits();
    const cpuBefore = await cpuReading();
    const summary: PassSummary = await ghzSearch(ghz, { requests, concurrency });
    summary.cpu_ms_per_search = cpuPerUnit(cpuBefore, await cpuReading(), requests.length);
    const after = await cacheHits();
    if (before !== undefined && after !== undefined) {
      const served = after - before;
      const expected = expectedHits(requests.length);
      const tolerated = expected > 0 ? Math.floor(expected * MISSED_HITS_TOLERATED) : 0;
      if (served > expected || served < expected - tolerated) {
        throw new Error(
          `ghz ${name}: ${served} of ${requests.length} searches were cache hits, expected ${expected}`,
        );
      }
      if (served < expected) summary.cache_misses = expected - served;
    }
    options.log(
      `ghz ${name}: ${JSON.stringify(summary)}${before === undefined ? ' (cache use not checked: no query-service URL)' : ''}`,
    );
    return summary;
  };
  const none = () => 0;
  const all = (sent: number) => sent;
  return {
    tool: 'ghz',
    miss: {
      c1: await pass('miss c1', misses(1), 1, none),
      c32: await pass('miss c32', misses(32), 32, none),
    },
    hit: {
      c1: await pass('hit priming', cached, 4, none).then(() => pass('hit c1', hits, 1, all)),
      c32: await pass('hit c32', hits, 32, all),
    },
    // `rerank: true` within the service's rerank budget (docs/adr/0047), cache misses.
    rerank_miss: {
      c1: await pass(
        'rerank miss c1',
        queries.map((q) => request(`${q} (${run} ghz rerank)`, true)),
        1,
        none,
      ),
    },
  };
}
