import { retryDelayMs } from './backoff';

const policy = { maxAttempts: 5, baseMs: 1_000, maxMs: 6_000 };
const full = () => 0.999_999; // the top of each step's random half

describe('retryDelayMs', () => {
  it('doubles the wait after each failed try, from the base', () => {
    expect([1, 2, 3].map((failed) => retryDelayMs(failed, policy, full))).toEqual([
      1_000, 2_000, 4_000,
    ]);
  });

  it('caps the wait', () => {
    expect(retryDelayMs(4, policy, full)).toBe(6_000);
    expect(retryDelayMs(4, { ...policy, maxAttempts: 100 }, full)).toBe(6_000);
    expect(retryDelayMs(99, { ...policy, maxAttempts: 100 }, full)).toBe(6_000);
  });

  it('gives up once the tries are used up', () => {
    expect(retryDelayMs(5, policy, full)).toBeUndefined();
    expect(retryDelayMs(1, { ...policy, maxAttempts: 1 }, full)).toBeUndefined();
  });

  it('makes half of each wait random (equal jitter, the one backoff rule)', () => {
    expect(retryDelayMs(2, policy, () => 0)).toBe(1_000);
    expect(retryDelayMs(2, policy, () => 0.5)).toBe(1_500);
    expect(retryDelayMs(2, policy, full)).toBe(2_000);
  });
});
