import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

import { DomainError, ErrorKind } from '@kb/errors';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import type { ConsumerOptions, EventConsumer } from './event-consumer';

/** The service's Kafka consumers, built by a factory provider from its config and handlers. */
export const EVENT_CONSUMERS = Symbol('EVENT_CONSUMERS');

/**
 * Starts the service's consumers once the app is up and stops them at shutdown, so in-flight
 * handlers finish and offsets are committed before the producers and pools close.
 */
@Injectable()
export class EventConsumersHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(@Inject(EVENT_CONSUMERS) private readonly consumers: EventConsumer[]) {}

  async onApplicationBootstrap(): Promise<void> {
    await Promise.all(this.consumers.map((consumer) => consumer.start()));
  }

  /** Before the shutdown hooks that close producers and pools run (Nest calls this phase first). */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.consumers.map((consumer) => consumer.stop()));
  }

  /** A readiness condition: every consumer is in its group and hears from the broker. */
  get allJoined(): boolean {
    return this.consumers.every((consumer) => consumer.isJoined);
  }

  /**
   * The `kafka-consumer` readiness check (a `ReadinessCheck` of @kb/http): fails with the first
   * unhealthy consumer's reason (not joined yet, crashed, no answer from the broker).
   */
  readinessCheck(): { name: string; check: () => Promise<boolean> } {
    return {
      name: 'kafka-consumer',
      check: async () => {
        for (const consumer of this.consumers) {
          const { ok, reason } = consumer.health();
          if (!ok) {
            throw new DomainError(
              'consumer_not_ready',
              ErrorKind.Unavailable,
              reason ?? 'not ready',
            );
          }
        }
        return true;
      },
    };
  }
}

/** Logs a consumer's retries and dead letters through Nest's logger, as JSON. */
export function consumerLog(
  context: string,
): (message: string, details: Record<string, unknown>) => void {
  const logger = new Logger(context);
  return (message, details) => logger.warn({ message, ...details });
}

/**
 * A consumer group of this process alone, for events every replica must see (cache
 * invalidation): one group per instance instead of one per service. Its dead letters go to the
 * service's topic, `kb.dlq.<base>.v1`: a topic per instance would be left behind by every
 * restart (each pod start of three services made three).
 */
export function instanceGroup(base: string): Pick<ConsumerOptions, 'groupId' | 'deadLetterGroup'> {
  return { groupId: `${base}-${hostname()}-${randomUUID().slice(0, 8)}`, deadLetterGroup: base };
}
