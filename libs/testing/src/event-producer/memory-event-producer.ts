import {
  newEnvelope,
  parseEnvelope,
  type Topic,
  type TopicEnvelope,
  topicEventTypes,
} from '@kb/contracts';
import type { EventProducer, OutgoingEvent, RawMessage } from '@kb/kafka';

/** One published message, as a consumer of its topic would receive it. */
export interface PublishedMessage {
  topic: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

/**
 * Records what a service publishes, for unit tests. Messages are serialized exactly as
 * KafkaEventProducer sends them; `events(topic)` parses them back against the topic's schema, so a
 * payload that consumers would dead-letter as malformed fails the test that reads it.
 */
export class MemoryEventProducer implements EventProducer {
  private readonly sent: PublishedMessage[] = [];

  /** Every message in publish order. */
  get messages(): readonly PublishedMessage[] {
    return this.sent;
  }

  async connect(): Promise<void> {}

  async publish<T extends Topic>(event: OutgoingEvent<T>): Promise<void> {
    this.record(event);
  }

  async publishMany<T extends Topic>(events: OutgoingEvent<T>[]): Promise<void> {
    for (const event of events) this.record(event);
  }

  async publishRaw(messages: RawMessage[]): Promise<void> {
    for (const { topic, key, value, headers } of messages) {
      this.sent.push({ topic, key, value, headers: { ...headers } });
    }
  }

  async disconnect(): Promise<void> {}

  /** The envelopes published on `topic`, in order, validated against its schema. */
  events<T extends Topic>(topic: T): TopicEnvelope<T>[] {
    return this.sent
      .filter((message) => message.topic === topic)
      .map((message) => parseEnvelope(topic, JSON.parse(message.value)));
  }

  private record<T extends Topic>(event: OutgoingEvent<T>): void {
    const envelope = newEnvelope(topicEventTypes[event.topic], event.tenantId, event.payload);
    this.sent.push({
      topic: event.topic,
      key: event.key,
      value: JSON.stringify(envelope),
      headers: {},
    });
  }
}
