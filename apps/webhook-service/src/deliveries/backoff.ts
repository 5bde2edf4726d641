import { backoffDelay } from '@kb/timing';

export interface RetryPolicy {
  /** Tries per delivery, the first included. */
  maxAttempts: number;
  /** The wait after the first failed try. */
  baseMs: number;
  /** No wait is longer than this. */
  maxMs: number;
}

/**
 * The wait before the next try after `failedAttempts` failed ones, by the one backoff rule
 * (`backoffDelay`: doubling from `baseMs`, capped at `maxMs`, half of each step random so
 * receivers that failed together are not all retried in the same instant). `undefined` when the
 * tries are used up.
 */
export function retryDelayMs(
  failedAttempts: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number | undefined {
  if (failedAttempts >= policy.maxAttempts) return undefined;
  return backoffDelay(failedAttempts, { initialMs: policy.baseMs, maxMs: policy.maxMs }, random);
}
