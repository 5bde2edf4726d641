import { PairCost } from './rerank.cost';

describe('PairCost', () => {
  let clock: number;
  const now = () => clock;
  beforeEach(() => {
    clock = 0;
  });

  it('starts at the calibration and follows the runs as a moving average', () => {
    const cost = new PairCost(10, now);
    expect(cost.msPerPair).toBe(10);
    cost.record(4, 80); // 20 ms a pair: slower, a fifth of the way
    expect(cost.msPerPair).toBeCloseTo(0.8 * 10 + 0.2 * 20);
    cost.record(2, 2 * 4); // 4 ms a pair: faster, half of the way
    expect(cost.msPerPair).toBeCloseTo(0.5 * 12 + 0.5 * 4);
  });

  it('relaxes toward the lowest cost measured while no run measures it', () => {
    const cost = new PairCost(10, now);
    // A burst: the average climbs far above what a pair costs on a quiet machine.
    for (let i = 0; i < 10; i++) cost.record(4, 4 * 200);
    const high = cost.msPerPair;
    expect(high).toBeGreaterThan(150);
    clock += 10_000;
    expect(cost.msPerPair).toBeCloseTo(10 + (high - 10) * Math.exp(-1));
    clock += 60_000;
    // A budget of 150 ms pays for pairs again (the rerank step's depth), so the next run corrects it.
    expect(cost.msPerPair).toBeLessThan(11);
  });

  it('does not relax below the lowest run', () => {
    const cost = new PairCost(30, now);
    cost.record(2, 2 * 12);
    cost.record(2, 2 * 40);
    clock += 1_000_000;
    expect(cost.msPerPair).toBeCloseTo(12);
  });

  it('ignores a run of no pairs', () => {
    const cost = new PairCost(10, now);
    cost.record(0, 5);
    expect(cost.msPerPair).toBe(10);
  });
});
