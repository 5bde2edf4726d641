import { retryDelayMs } from './backoff';

const policy = { maxAttempts: 5, baseMs: 1_000, maxMs: 6_000 };
const middle = () => 0.5; // no spread

describe('retryDelayMs', () => {
  it('doubles the wait after each failed try, from the base', () => {
    expect([1, 2, 3].map((failed) => retryDelayMs(failed, policy, middle))).toEqual([
      1_000, 2_000, 4_000,
    ]);
  });

  it('caps the wait', () => {
    expect(retryDelayMs(4, policy, middle)).toBe(6_000);
    expect(retryDelayMs(4, { ...policy, maxAttempts: 100 }, middle)).toBe(6_000);
    expect(retryDelayMs(99, { ...policy, maxAttempts: 100 }, middle)).toBe(6_000);
  });

  it('gives up once the tries are used up', () => {
    expect(retryDelayMs(5, policy, middle)).toBeUndefined();
    expect(retryDelayMs(1, { ...policy, maxAttempts: 1 }, middle)).toBeUndefined();
  });

  it('spreads each wait by ±20 %', () => {
    expect(retryDelayMs(2, policy, () => 0)).toBe(1_600);
    expect(retryDelayMs(2, policy, () => 0.999_999)).toBe(2_400);
  });
});
