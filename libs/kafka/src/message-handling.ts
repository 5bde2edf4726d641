import { deadLetterTopic, parseEnvelope, type Topic, type TopicEnvelope } from '@kb/contracts';
import { classifyError, ErrorClass, isPermanent } from '@kb/errors';
import { meter } from '@kb/observability';
import { backoffDelay } from '@kb/timing';
import type { KafkaMessage, Producer } from 'kafkajs';

import type { CommitOffset, DeliveryCounter } from './delivery-count';
import type {
  BatchEventHandler,
  ConsumerOptions,
  DeadLetter,
  EventHandler,
} from './event-consumer';
import { eventLabels, knowledgeBaseOfBatch, knowledgeBaseOfEvent, tally } from './event-labels';
import { ConsumerStoppingError, isRebalance, type Waiter } from './retry-wait';

// Each also carries `knowledge_base` when the event names one (event-labels.ts, ADR 41).
const handled = meter().createCounter('kb_events_handled_total', {
  description: 'Kafka messages handled successfully, by topic, consumer group and knowledge base',
});
const deadLettered = meter().createCounter('kb_events_dead_lettered_total', {
  description:
    'Kafka messages sent to a dead-letter topic, by topic, group, reason and knowledge base',
});
const retried = meter().createCounter('kb_events_retried_total', {
  description:
    'Handler retries, by topic, group, class (transient: a dependency is away) and knowledge base',
});
const handleDuration = meter().createHistogram('kb_event_handle_duration_ms', {
  description: 'Time to handle one message, retries included',
  unit: 'ms',
});

export const HEARTBEAT_MS = 3_000;
/**
 * A dead letter's error text in its headers and its log line, at most: the schema error of a
 * malformed list event names every bad item (one access snapshot of 500 documents: 190 kB).
 */
const ERROR_TEXT_LIMIT = 1000;

/** What one partition's batch gives a handler: heartbeats and commits through kafkajs. */
export interface BatchContext {
  topic: string;
  partition: number;
  heartbeat: () => Promise<void>;
  commit: CommitOffset;
}

/**
 * What `EventConsumer` does with the messages of one partition's batch: counts each delivery,
 * parses it against its topic's schema, runs its handler with retries by the error's class, and
 * dead-letters it on a verdict (ADR 17). Throws only when the consumer stops or the group
 * rebalances: the message is then redelivered.
 */
export class MessageHandling {
  constructor(
    private readonly options: ConsumerOptions,
    private readonly deliveries: DeliveryCounter,
    private readonly dlqProducer: Producer,
    private readonly waiter: Waiter,
    private readonly isStopping: () => boolean,
  ) {}

  /**
   * One batch handler call for a partition's batch; the delivery is counted once, on the batch's
   * first offset. False (the caller goes one by one) when the last delivery of that batch died,
   * when a message is malformed, or when the handler keeps failing (not transiently): each
   * message then meets its own verdict.
   */
  async handleAll(
    context: BatchContext,
    messages: KafkaMessage[],
    handler: BatchEventHandler<Topic>,
  ): Promise<boolean> {
    const topic = context.topic as Topic;
    const deliveries = await this.deliveries.begin(
      topic,
      context.partition,
      messages[0]!.offset,
      context.commit,
    );
    if (deliveries > 1) return false;
    // Going one by one after this delivery survived: it must not count towards the poison limit
    // of the batch's first message, whose own handling counts again.
    const oneByOne = async (): Promise<false> => {
      await this.deliveries.forgive(topic, context.partition, messages[0]!.offset, context.commit);
      return false;
    };
    const envelopes: TopicEnvelope<Topic>[] = [];
    for (const message of messages) {
      try {
        envelopes.push(parseEnvelope(topic, JSON.parse(message.value?.toString() ?? 'null')));
      } catch {
        return oneByOne();
      }
    }
    const group = this.options.groupId;
    const knowledgeBases = envelopes.map(knowledgeBaseOfEvent);
    const labels = eventLabels(topic, group, knowledgeBaseOfBatch(knowledgeBases));
    const started = performance.now();
    let failures = 0;
    let waits = 0;
    try {
      for (;;) {
        try {
          await this.withHeartbeats(context, () => handler(envelopes));
          for (const [knowledgeBase, count] of tally(knowledgeBases)) {
            handled.add(count, eventLabels(topic, group, knowledgeBase));
          }
          return true;
        } catch (error) {
          if (this.isStopping()) throw new ConsumerStoppingError(error);
          const errorClass = classifyError(error);
          if (errorClass === ErrorClass.Permanent || failures + 1 >= this.maxAttempts(errorClass)) {
            this.options.log?.('batch handler failed, handling one by one', {
              topic,
              messages: messages.length,
              error: String(error),
            });
            return oneByOne();
          }
          if (errorClass === ErrorClass.Transient) waits += 1;
          else failures += 1;
          retried.add(1, { ...labels, class: errorClass });
          await this.pause(
            context,
            errorClass === ErrorClass.Transient
              ? backoffDelay(waits, {
                  initialMs: this.initialBackoffMs,
                  maxMs: this.options.maxTransientBackoffMs ?? 30_000,
                })
              : backoffDelay(failures, { initialMs: this.initialBackoffMs, maxMs: 10_000 }),
          );
        }
      }
    } finally {
      handleDuration.record(performance.now() - started, labels);
    }
  }

  async handle(context: BatchContext, message: KafkaMessage): Promise<void> {
    const topic = context.topic as Topic;
    const key = message.key?.toString() ?? null;
    const deliveries = await this.deliveries.begin(
      topic,
      context.partition,
      message.offset,
      context.commit,
    );
    let envelope: TopicEnvelope<Topic>;
    try {
      envelope = parseEnvelope(topic, JSON.parse(message.value?.toString() ?? 'null'));
    } catch (error) {
      await this.deadLetter(context, message, {
        topic,
        key,
        reason: 'malformed_message',
        error: String(error),
        permanent: true,
      });
      return;
    }
    const maxDeliveries = this.options.maxDeliveries ?? 3;
    if (deliveries > maxDeliveries) {
      await this.deadLetter(context, message, {
        topic,
        key,
        reason: 'delivery_limit',
        error: `delivered ${deliveries - 1} times without an outcome: the consumer died handling it`,
        permanent: false,
        envelope,
      });
      return;
    }
    const handler = this.options.handlers[topic] as EventHandler<Topic>;
    const started = performance.now();
    const labels = eventLabels(topic, this.options.groupId, knowledgeBaseOfEvent(envelope));
    try {
      await this.untilOutcome(context, message, envelope, labels, () => handler(envelope));
    } finally {
      handleDuration.record(performance.now() - started, labels);
    }
  }

  /**
   * Runs the handler until it succeeds, or a verdict sends the message to the dead-letter topic.
   * Throws only when the consumer stops or the group rebalances: the message is then redelivered.
   */
  private async untilOutcome(
    context: BatchContext,
    message: KafkaMessage,
    envelope: TopicEnvelope<Topic>,
    labels: Record<string, string>,
    attempt: () => Promise<void>,
  ): Promise<void> {
    const topic = context.topic;
    const key = message.key?.toString() ?? null;
    let failures = 0;
    let waits = 0;
    for (;;) {
      try {
        await this.withHeartbeats(context, attempt);
        handled.add(1, labels);
        return;
      } catch (error) {
        if (this.isStopping()) throw new ConsumerStoppingError(error);
        const errorClass = classifyError(error);
        if (errorClass === ErrorClass.Permanent || failures + 1 >= this.maxAttempts(errorClass)) {
          const permanent = isPermanent(error);
          await this.deadLetter(context, message, {
            topic,
            key,
            reason: permanent ? error.reason : 'retries_exhausted',
            error: errorMessage(error),
            permanent,
            envelope,
          });
          return;
        }
        let delayMs: number;
        if (errorClass === ErrorClass.Transient) {
          // The process survived this delivery: it must not count towards the poison limit.
          if (waits === 0) {
            await this.deliveries.forgive(topic, context.partition, message.offset, context.commit);
          }
          waits += 1;
          delayMs = backoffDelay(waits, {
            initialMs: this.initialBackoffMs,
            maxMs: this.options.maxTransientBackoffMs ?? 30_000,
          });
        } else {
          failures += 1;
          delayMs = backoffDelay(failures, { initialMs: this.initialBackoffMs, maxMs: 10_000 });
        }
        retried.add(1, { ...labels, class: errorClass });
        this.options.log?.(
          errorClass === ErrorClass.Transient
            ? 'a dependency is away, waiting'
            : 'handler failed, retrying',
          { topic, key, attempt: failures + waits, delayMs, error: String(error) },
        );
        await this.pause(context, delayMs);
      }
    }
  }

  private maxAttempts(errorClass: ErrorClass): number {
    return errorClass === ErrorClass.Transient ? Infinity : (this.options.maxAttempts ?? 5);
  }

  private get initialBackoffMs(): number {
    return this.options.initialBackoffMs ?? 200;
  }

  /**
   * Runs a handler while heartbeating every few seconds: a long one (a big document, a slow model)
   * keeps its group membership and shows the broker is reachable.
   */
  private async withHeartbeats(context: BatchContext, work: () => Promise<void>): Promise<void> {
    const timer = setInterval(() => {
      context.heartbeat().catch(() => undefined); // a rebalance is noticed after the handler
    }, HEARTBEAT_MS);
    try {
      await work();
    } finally {
      clearInterval(timer);
    }
  }

  /** Waits `ms`, heartbeating; a rebalance or a stop ends the wait by throwing. */
  private async pause(context: BatchContext, ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.isStopping() && Date.now() < until) {
      await this.waiter.sleep(Math.min(HEARTBEAT_MS, until - Date.now()));
      try {
        await context.heartbeat();
      } catch (error) {
        // Another member joined: give the partition up now, the message is redelivered.
        if (isRebalance(error)) throw error;
        // The broker is away too: keep waiting; kafkajs reconnects.
      }
    }
    if (this.isStopping()) throw new ConsumerStoppingError();
  }

  private async deadLetter(
    context: BatchContext,
    message: KafkaMessage,
    letter: DeadLetter,
  ): Promise<void> {
    const error =
      letter.error.length <= ERROR_TEXT_LIMIT
        ? letter.error
        : `${letter.error.slice(0, ERROR_TEXT_LIMIT)}… (${letter.error.length} characters)`;
    this.options.log?.('message dead-lettered', { ...letter, error, envelope: undefined });
    const knowledgeBase = letter.envelope && knowledgeBaseOfEvent(letter.envelope);
    deadLettered.add(1, {
      ...eventLabels(letter.topic, this.options.groupId, knowledgeBase),
      reason: letter.reason,
    });
    // Publishing the letter and marking the document wait out an outage like a handler does.
    await this.untilSent(context, async () => {
      await this.dlqProducer.send({
        topic: deadLetterTopic(this.options.deadLetterGroup ?? this.options.groupId),
        acks: -1,
        messages: [
          {
            key: message.key,
            value: message.value,
            headers: {
              ...message.headers,
              'x-dlq-source-topic': letter.topic,
              'x-dlq-reason': letter.reason,
              'x-dlq-error': letter.error.slice(0, ERROR_TEXT_LIMIT),
            },
          },
        ],
      });
    });
    const onDeadLetter = this.options.onDeadLetter;
    if (onDeadLetter) await this.untilSent(context, () => onDeadLetter(letter));
  }

  /** Retries `send` while its failure is transient (forever) or up to `maxAttempts` otherwise. */
  private async untilSent(context: BatchContext, send: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await send();
        return;
      } catch (error) {
        if (this.isStopping()) throw new ConsumerStoppingError(error);
        const errorClass = classifyError(error);
        if (errorClass !== ErrorClass.Transient && attempt >= (this.options.maxAttempts ?? 5)) {
          throw error;
        }
        this.options.log?.('dead-lettering failed, retrying', { attempt, error: String(error) });
        await this.pause(
          context,
          backoffDelay(attempt, { initialMs: this.initialBackoffMs, maxMs: 30_000 }),
        );
      }
    }
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
