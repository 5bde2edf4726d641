import { deadLetterTopic, parseEnvelope, type Topic, type TopicEnvelope } from '@kb/contracts';
import { meter } from '@kb/observability';
import { backOff } from 'exponential-backoff';
import { type Consumer, type Kafka, type KafkaMessage, Partitioners } from 'kafkajs';

import { isPermanent } from './errors';
import { ensureTopics } from './kafka';

const handled = meter().createCounter('kb_events_handled_total', {
  description: 'Kafka messages handled successfully, by topic and consumer group',
});
const deadLettered = meter().createCounter('kb_events_dead_lettered_total', {
  description: 'Kafka messages sent to a dead-letter topic, by topic, group and reason',
});
const handleDuration = meter().createHistogram('kb_event_handle_duration_ms', {
  description: 'Time to handle one message, retries included',
  unit: 'ms',
});

export type EventHandler<T extends Topic> = (event: TopicEnvelope<T>) => Promise<void>;

export type HandlerMap = { [T in Topic]?: EventHandler<T> };

export interface DeadLetter {
  topic: string;
  key: string | null;
  /** Machine-readable reason: `malformed_message`, a PermanentError's reason, or `retries_exhausted`. */
  reason: string;
  /** The error's text, for operators (the dead-letter topic's headers and the logs). */
  error: string;
  /**
   * True when a PermanentError gave up: its message was written for whoever sent the document and
   * may be shown to them; any other error's text may name hosts, SQL or S3 internals.
   */
  permanent: boolean;
  /** The parsed envelope, when the message was well-formed. */
  envelope?: TopicEnvelope<Topic>;
}

export interface ConsumerOptions {
  groupId: string;
  handlers: HandlerMap;
  /** Attempts per message before it is dead-lettered. */
  maxAttempts?: number;
  initialBackoffMs?: number;
  /** Called after a message went to the dead-letter topic, e.g. to mark the document failed. */
  onDeadLetter?: (letter: DeadLetter) => Promise<void>;
  log?: (message: string, context: Record<string, unknown>) => void;
  /** Read a new group's topics from the start (default) or only what arrives from now on. */
  fromBeginning?: boolean;
}

/**
 * Runs a consumer group over typed topics. Each message is validated against its topic's schema,
 * handled with retries and exponential backoff, and dead-lettered when it keeps failing, so a bad
 * message never blocks its partition or crash-loops the service. Offsets are committed only after a
 * message is handled or dead-lettered (at-least-once), so handlers must be idempotent.
 */
export class EventConsumer {
  private readonly consumer: Consumer;
  private readonly dlqProducer;
  private joined = false;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: ConsumerOptions,
  ) {
    this.consumer = kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: 30_000,
      heartbeatInterval: 3_000,
    });
    this.dlqProducer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => {
      this.joined = true;
    });
  }

  /** True once the consumer has joined its group (a readiness condition). */
  get isJoined(): boolean {
    return this.joined;
  }

  async start(): Promise<void> {
    const topics = Object.keys(this.options.handlers);
    await ensureTopics(this.kafka, [...topics, deadLetterTopic(this.options.groupId)]);
    await this.dlqProducer.connect();
    await this.consumer.connect();
    await backOff(
      () => this.consumer.subscribe({ topics, fromBeginning: this.options.fromBeginning ?? true }),
      {
        numOfAttempts: 8,
        startingDelay: 250,
        maxDelay: 5_000,
      },
    );
    await this.consumer.run({
      // Partitions are processed in parallel; one document's events share a key, so stay ordered.
      partitionsConsumedConcurrently: 3,
      eachMessage: async ({ topic, message }) => this.handle(topic as Topic, message),
    });
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
    await this.dlqProducer.disconnect();
  }

  private async handle(topic: Topic, message: KafkaMessage): Promise<void> {
    const key = message.key?.toString() ?? null;
    let envelope: TopicEnvelope<Topic>;
    try {
      envelope = parseEnvelope(topic, JSON.parse(message.value?.toString() ?? 'null'));
    } catch (error) {
      await this.deadLetter(message, {
        topic,
        key,
        reason: 'malformed_message',
        error: String(error),
        permanent: true,
      });
      return;
    }
    const handler = this.options.handlers[topic] as EventHandler<Topic>;
    const started = performance.now();
    const labels = { topic, group: this.options.groupId };
    try {
      await backOff(() => handler(envelope), {
        numOfAttempts: this.options.maxAttempts ?? 5,
        startingDelay: this.options.initialBackoffMs ?? 200,
        timeMultiple: 2,
        maxDelay: 10_000,
        jitter: 'full',
        retry: (error: unknown, attempt: number) => {
          if (isPermanent(error)) return false;
          this.options.log?.('handler failed, retrying', {
            topic,
            key,
            attempt,
            error: String(error),
          });
          return true;
        },
      });
      handled.add(1, labels);
    } catch (error) {
      const permanent = isPermanent(error);
      const reason = permanent ? error.reason : 'retries_exhausted';
      await this.deadLetter(message, {
        topic,
        key,
        reason,
        error: errorMessage(error),
        permanent,
        envelope,
      });
    } finally {
      handleDuration.record(performance.now() - started, labels);
    }
  }

  private async deadLetter(message: KafkaMessage, letter: DeadLetter): Promise<void> {
    this.options.log?.('message dead-lettered', { ...letter, envelope: undefined });
    deadLettered.add(1, {
      topic: letter.topic,
      group: this.options.groupId,
      reason: letter.reason,
    });
    await this.dlqProducer.send({
      topic: deadLetterTopic(this.options.groupId),
      acks: -1,
      messages: [
        {
          key: message.key,
          value: message.value,
          headers: {
            ...message.headers,
            'x-dlq-source-topic': letter.topic,
            'x-dlq-reason': letter.reason,
            'x-dlq-error': letter.error.slice(0, 1000),
          },
        },
      ],
    });
    await this.options.onDeadLetter?.(letter);
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
