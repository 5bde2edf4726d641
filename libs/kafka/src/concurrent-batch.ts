import type { Topic, TopicEnvelope } from '@kb/contracts';

import type { BatchEventHandler, EventHandler } from './event-consumer';

export interface ConcurrentBatchOptions<T extends Topic> {
  /** Events with the same key are handled one after the other, in the batch's order. */
  keyOf: (event: TopicEnvelope<T>) => string;
  /**
   * How much of `budget` an event takes while it is handled (default 1), e.g. its chunk count:
   * an event starts when what is in flight leaves room for it, or when nothing is in flight.
   */
  weightOf?: (event: TopicEnvelope<T>) => number;
  /** The most weight in flight at once. */
  budget: number;
}

/**
 * A batch handler that runs a one-event handler over a fetched batch concurrently (docs/adr/0029,
 * Ingest): events of different keys (documents) overlap, up to `budget`; a key's events keep
 * their order. After the first failure nothing new starts; the handlers running are awaited and
 * the first error is thrown, so the consumer retries the batch or goes one by one as for any batch
 * handler. Events handled in an earlier try of the same delivery are not handled again.
 */
export function concurrentBatchHandler<T extends Topic>(
  handler: EventHandler<T>,
  options: ConcurrentBatchOptions<T>,
): BatchEventHandler<T> {
  // The consumer hands the same envelopes to every try of one delivery.
  const done = new WeakSet<TopicEnvelope<T>>();
  const weightOf = (event: TopicEnvelope<T>) => Math.max(1, options.weightOf?.(event) ?? 1);
  return async (events) => {
    const queues = new Map<string, TopicEnvelope<T>[]>();
    for (const event of events) {
      if (done.has(event)) continue;
      const key = options.keyOf(event);
      const queue = queues.get(key);
      if (queue) queue.push(event);
      else queues.set(key, [event]);
    }
    let inFlight = 0;
    let running = 0;
    let failure: { error: unknown } | undefined;
    await new Promise<void>((resolve) => {
      const busyKeys = new Set<string>();
      const startWhatFits = (): void => {
        if (!failure) {
          for (const [key, queue] of queues) {
            if (busyKeys.has(key)) continue;
            const event = queue[0]!;
            const weight = weightOf(event);
            if (running > 0 && inFlight + weight > options.budget) break;
            queue.shift();
            if (queue.length === 0) queues.delete(key);
            busyKeys.add(key);
            inFlight += weight;
            running += 1;
            void Promise.resolve()
              .then(() => handler(event))
              .then(
                () => {
                  done.add(event);
                },
                (error: unknown) => {
                  failure ??= { error };
                },
              )
              .finally(() => {
                busyKeys.delete(key);
                inFlight -= weight;
                running -= 1;
                startWhatFits();
              });
          }
        }
        if (running === 0) resolve();
      };
      startWhatFits();
    });
    if (failure) throw failure.error;
  };
}
