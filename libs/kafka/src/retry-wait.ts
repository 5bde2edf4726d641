/** Thrown out of a handler's retries when the consumer stops: the message is redelivered later. */
export class ConsumerStoppingError extends Error {
  constructor(cause?: unknown) {
    super('the consumer is stopping; the message will be redelivered', { cause });
    this.name = 'ConsumerStoppingError';
  }
}

/** The kafkajs errors that mean the group is rebalancing and this member must rejoin. */
const REBALANCE_TYPES: ReadonlySet<string> = new Set([
  'REBALANCE_IN_PROGRESS',
  'UNKNOWN_MEMBER_ID',
  'ILLEGAL_GENERATION',
  'FENCED_INSTANCE_ID',
]);

export function isRebalance(error: unknown): boolean {
  const type = (error as { type?: unknown } | null)?.type;
  return typeof type === 'string' && REBALANCE_TYPES.has(type);
}

/** Sleeps that a stop can cut short. */
export class Waiter {
  private readonly wakers = new Set<() => void>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.wakers.add(done);
    });
  }

  wakeAll(): void {
    for (const wake of [...this.wakers]) wake();
  }
}
