import { newEnvelope, type Topic, topicEventTypes, type TopicPayload } from '@kb/contracts';
import { type Kafka, Partitioners, type Producer } from 'kafkajs';

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
  /** Sends an already-serialized envelope (used by the outbox relay, which stored it at write time). */
  publishRaw(
    topic: string,
    key: string,
    value: string,
    headers?: Record<string, string>,
  ): Promise<void>;
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
    await this.publishRaw(event.topic, event.key, JSON.stringify(envelope));
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

  async publishRaw(
    topic: string,
    key: string,
    value: string,
    headers: Record<string, string> = {},
  ): Promise<void> {
    await this.connect();
    await this.producer.send({ topic, acks: -1, messages: [{ key, value, headers }] });
  }

  async disconnect(): Promise<void> {
    if (this.connected) {
      await this.producer.disconnect();
      this.connected = false;
    }
  }
}
