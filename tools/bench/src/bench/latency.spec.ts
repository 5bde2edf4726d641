import { measure, percentile } from './latency';

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
  });
});
