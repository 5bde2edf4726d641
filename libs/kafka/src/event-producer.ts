import { newEnvelope, type Topic, topicEventTypes, type TopicPayload } from '@kb/contracts';
import { untraced } from '@kb/observability';
import { type Kafka, Partitioners, type Producer } from 'kafkajs';

/** An envelope serialized at write time (the outbox's rows), with the trace headers of its writer. */
export interface RawMessage {
  topic: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

export interface OutgoingEvent<T extends Topic> {
  topic: T;
  tenantId: string;
  /** Partition key; every event about one document uses its id, so they stay ordered. */
  key: string;
  payload: TopicPayload<T>;
}

/**
 * The event-publishing port: typed events wrapped in the shared envelope. Services depend on this;
 * `KafkaEventProducer` sends to the broker, `MemoryEventProducer` (@kb/testing) records in memory.
 * Both pass `libs/kafka/test/support/conformance.ts`.
 */
export interface EventProducer {
  /** Optional before the first publish (which connects); idempotent. */
  connect(): Promise<void>;
  publish<T extends Topic>(event: OutgoingEvent<T>): Promise<void>;
  /** Publishes several events at once; events with one key keep their order. */
  publishMany<T extends Topic>(events: OutgoingEvent<T>[]): Promise<void>;
  /**
   * Sends already-serialized envelopes (the outbox relay's rows) in one produce request, each with
   * its own headers as given: its consumers continue the trace of the code that wrote it.
   */
  publishRaw(messages: RawMessage[]): Promise<void>;
  disconnect(): Promise<void>;
}

/** Publishes to Kafka. Idempotent producer, acks from all replicas. */
export class KafkaEventProducer implements EventProducer {
  private readonly producer: Producer;
  private connected = false;

  constructor(kafka: Kafka) {
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  }

  async connect(): Promise<void> {
    if (!this.connected) {
      await this.producer.connect();
      this.connected = true;
    }
  }

  async publish<T extends Topic>(event: OutgoingEvent<T>): Promise<void> {
    const envelope = newEnvelope(topicEventTypes[event.topic], event.tenantId, event.payload);
    await this.connect();
    await this.producer.send({
      topic: event.topic,
      acks: -1,
      messages: [{ key: event.key, value: JSON.stringify(envelope) }],
    });
  }

  /** One produce request (one round trip to the broker). */
  async publishMany<T extends Topic>(events: OutgoingEvent<T>[]): Promise<void> {
    if (events.length === 0) return;
    const byTopic = new Map<string, Array<{ key: string; value: string }>>();
    for (const event of events) {
      const envelope = newEnvelope(topicEventTypes[event.topic], event.tenantId, event.payload);
      const messages = byTopic.get(event.topic) ?? [];
      messages.push({ key: event.key, value: JSON.stringify(envelope) });
      byTopic.set(event.topic, messages);
    }
    await this.connect();
    await this.producer.sendBatch({
      acks: -1,
      topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
    });
  }

  /**
   * One produce request for the lot, messages of one topic in their order. Tracing is suppressed
   * around it: the kafkajs instrumentation would otherwise start a producer span per message in
   * the relay's context and write that span over the headers each message carries.
   */
  async publishRaw(messages: RawMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const byTopic = new Map<string, Omit<RawMessage, 'topic'>[]>();
    for (const { topic, key, value, headers } of messages) {
      const sameTopic = byTopic.get(topic) ?? [];
      sameTopic.push({ key, value, headers: { ...headers } });
      byTopic.set(topic, sameTopic);
    }
    await this.connect();
    await untraced(() =>
      this.producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, batch]) => ({ topic, messages: batch })),
      }),
    );
  }

  async disconnect(): Promise<void> {
    if (this.connected) {
      await this.producer.disconnect();
      this.connected = false;
    }
  }
}
