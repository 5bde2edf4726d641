/** How a wait grows: from `initialMs` after the first failure, doubling, never above `maxMs`. */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

/**
 * The wait after `failures` failed tries (1 for the first): `initialMs × 2^(failures − 1)`, capped
 * at `maxMs`, with "equal" jitter: half of it fixed, half random, so callers that failed together
 * (replicas on one dependency, receivers behind one outage) do not retry in step, and no wait is
 * shorter than half its step. `random` returns [0, 1) (a fixed one in tests).
 *
 * This is the one rule for waits the services schedule themselves (a Kafka handler's retries, a
 * webhook's next attempt). Calls retried in place use `exponential-backoff`; a server's
 * `Retry-After` is honoured by the caller that reads it.
 */
export function backoffDelay(
  failures: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const step = Math.min(
    policy.maxMs,
    policy.initialMs * 2 ** Math.min(Math.max(failures, 1) - 1, 40),
  );
  return Math.round(step / 2 + (random() * step) / 2);
}
