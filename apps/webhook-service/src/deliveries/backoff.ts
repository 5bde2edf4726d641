export interface RetryPolicy {
  /** Tries per delivery, the first included. */
  maxAttempts: number;
  /** The wait after the first failed try. */
  baseMs: number;
  /** No wait is longer than this. */
  maxMs: number;
}

/**
 * The wait before the next try after `failedAttempts` failed ones: `baseMs × 2^(failed − 1)`,
 * capped at `maxMs`, spread by ±20 % (`random` in [0, 1)) so receivers that failed together are
 * not all retried in the same instant. `undefined` when the tries are used up.
 */
export function retryDelayMs(
  failedAttempts: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number | undefined {
  if (failedAttempts >= policy.maxAttempts) return undefined;
  const exponential = policy.baseMs * 2 ** Math.min(failedAttempts - 1, 40);
  const capped = Math.min(policy.maxMs, exponential);
  return Math.round(capped * (0.8 + 0.4 * random()));
}
