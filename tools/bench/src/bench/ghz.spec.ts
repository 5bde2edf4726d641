import { cacheHitsIn, summarizeGhz } from './ghz';

describe('cacheHitsIn', () => {
  it('sums the cache hits of every mode and ignores misses and other metrics', () => {
    const metrics = [
      '# HELP kb_search_requests_total Searches by mode, cache outcome and whether they were degraded',
      'kb_search_requests_total{mode="hybrid",cache="miss",degraded="false",otel_scope_name="kb"} 76',
      'kb_search_requests_total{mode="hybrid",cache="hit",degraded="false",otel_scope_name="kb"} 15884',
      'kb_search_requests_total{mode="lexical",cache="hit",degraded="false",otel_scope_name="kb"} 16',
      'kb_search_duration_ms_count{mode="hybrid",cache="hit",degraded="false"} 999',
    ].join('\n');
    expect(cacheHitsIn(metrics)).toBe(15_900);
    expect(cacheHitsIn('')).toBe(0);
  });
});

describe('summarizeGhz', () => {
  const report = {
    count: 3,
    total: 3e9,
    rps: 1.0049,
    statusCodeDistribution: { OK: 3 },
    latencyDistribution: [50, 95, 99].map((percentage) => ({
      percentage,
      latency: percentage * 1e5,
    })),
  };

  it('reads the percentiles in milliseconds and the throughput', () => {
    expect(summarizeGhz(report, 3)).toEqual({ p50_ms: 5, p95_ms: 9.5, p99_ms: 9.9, qps: 1 });
  });

  it('fails when fewer answers than requests were OK', () => {
    expect(() => summarizeGhz(report, 4)).toThrow('ghz: 3 of 4 searches answered OK');
  });

  it('counts searches past the deadline, timed among the latencies, and still fails on any other error', () => {
    const late = {
      ...report,
      statusCodeDistribution: { OK: 2, DeadlineExceeded: 1 },
      errorDistribution: {
        'rpc error: code = DeadlineExceeded desc = context deadline exceeded': 1,
      },
    };
    expect(summarizeGhz(late, 3)).toEqual({
      p50_ms: 5,
      p95_ms: 9.5,
      p99_ms: 9.9,
      qps: 1,
      deadline_exceeded: 1,
    });
    const unavailable = {
      ...report,
      statusCodeDistribution: { OK: 2, Unavailable: 1 },
      errorDistribution: { 'rpc error: code = Unavailable desc = connection refused': 1 },
    };
    expect(() => summarizeGhz(unavailable, 3)).toThrow(
      'ghz: 2 of 3 searches answered OK (Unavailable × 1, rpc error: code = Unavailable desc = connection refused × 1)',
    );
  });
});
