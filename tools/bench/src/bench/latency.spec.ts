import { status } from '@grpc/grpc-js';

import { measure, percentile, StageSamples } from './latency';

describe('percentile (nearest rank)', () => {
  const samples = Array.from({ length: 100 }, (_, i) => i + 1);
  it('picks the nearest-rank sample', () => {
    expect(percentile(samples, 50)).toBe(50);
    expect(percentile(samples, 95)).toBe(95);
    expect(percentile(samples, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBe(0);
  });
});

describe('measure', () => {
  it('runs every request once with bounded concurrency', async () => {
    let inFlight = 0;
    let peak = 0;
    let calls = 0;
    const request = async () => {
      calls++;
      peak = Math.max(peak, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
    };
    const summary = await measure(
      Array.from({ length: 20 }, () => request),
      4,
    );
    expect(calls).toBe(20);
    expect(peak).toBe(4);
    expect(summary.qps).toBeGreaterThan(0);
    expect(summary.deadline_exceeded).toBeUndefined();
  });

  it('counts and times requests past the deadline, and stops on any other failure', async () => {
    const late = Object.assign(new Error('4 DEADLINE_EXCEEDED: over budget'), {
      code: status.DEADLINE_EXCEEDED,
    });
    const fails = (error: Error) => () =>
      new Promise<never>((_, reject) => setTimeout(() => reject(error), 20));
    const ok = () => Promise.resolve();
    const summary = await measure([ok, fails(late), ok, fails(late)], 2);
    expect(summary.deadline_exceeded).toBe(2);
    // Their 20 ms count among the latencies: the slowest of four is one of them.
    expect(summary.p99_ms).toBeGreaterThanOrEqual(15);
    const broken = Object.assign(new Error('14 UNAVAILABLE'), { code: status.UNAVAILABLE });
    await expect(measure([ok, fails(broken)], 1)).rejects.toThrow('UNAVAILABLE');
  });
});

describe('StageSamples.slowest', () => {
  it("averages each stage over the requests at or above the totals' p95", () => {
    const samples = new StageSamples();
    for (let i = 1; i <= 19; i++) {
      samples.record([
        { name: 'embed', ms: 5 },
        { name: 'total', ms: i },
      ]);
    }
    samples.record([
      { name: 'embed', ms: 40 },
      { name: 'vector', ms: 20 },
      { name: 'total', ms: 70 },
    ]);
    // p95 of 20 totals (nearest rank) is the 19th, 19 ms: the last two requests are the tail.
    expect(samples.slowest()).toEqual({ embed: 22.5, total: 44.5, vector: 10 });
  });

  it('is empty when no request reported a total', () => {
    const samples = new StageSamples();
    samples.record([{ name: 'cache', ms: 1 }]);
    expect(samples.slowest()).toEqual({});
  });
});
