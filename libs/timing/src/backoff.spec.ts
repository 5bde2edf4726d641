import { backoffDelay } from './backoff';

describe('backoffDelay', () => {
  const policy = { initialMs: 100, maxMs: 1_000 };

  it('doubles from the first wait, with half of each step random', () => {
    expect(backoffDelay(1, policy, () => 0)).toBe(50);
    expect(backoffDelay(1, policy, () => 0.999999)).toBe(100);
    expect(backoffDelay(2, policy, () => 0)).toBe(100);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(300);
  });

  it('never waits longer than the cap, nor less than half of it once reached', () => {
    for (const failures of [5, 10, 60, 1_000]) {
      expect(backoffDelay(failures, policy, () => 0.999999)).toBe(1_000);
      expect(backoffDelay(failures, policy, () => 0)).toBe(500);
    }
  });

  it('treats a count below one as the first failure', () => {
    expect(backoffDelay(0, policy, () => 0)).toBe(50);
  });
});
