import { randomUUID } from 'node:crypto';

import { Topics } from '@kb/contracts';
import type { Consumer, Kafka } from 'kafkajs';

import { createKafka, ensureTopics, KafkaEventProducer } from '../src';
import { eventProducerConformance, type ReceivedMessage } from './support/conformance';

jest.setTimeout(90_000);

/** Runs against the real broker from `npm run infra:up`; one reader follows every topic. */
describe('KafkaEventProducer', () => {
  let kafka: Kafka;
  let producer: KafkaEventProducer;
  let reader: Consumer;
  const byKey = new Map<string, ReceivedMessage[]>();

  beforeAll(async () => {
    kafka = createKafka({
      brokers: process.env['KAFKA_BROKERS']!.split(','),
      clientId: 'kafka-producer-int-test',
    });
    await ensureTopics(kafka, Object.values(Topics));
    producer = new KafkaEventProducer(kafka);
    // The reader's group starts at every topic's end: read from the beginning, it went through
    // the broker's whole history first (every audit record of earlier runs on this machine) and
    // timed out before reaching what the test published.
    const groupId = `producer-test-${randomUUID()}`;
    const admin = kafka.admin();
    await admin.connect();
    try {
      for (const topic of Object.values(Topics)) {
        await admin.resetOffsets({ groupId, topic, earliest: false });
      }
    } finally {
      await admin.disconnect();
    }
    reader = kafka.consumer({ groupId });
    await reader.connect();
    await reader.subscribe({ topics: Object.values(Topics) });
    await reader.run({
      eachMessage: async ({ topic, message }) => {
        const key = message.key?.toString() ?? '';
        const headers = Object.fromEntries(
          Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]),
        );
        const messages = byKey.get(key) ?? [];
        messages.push({ topic, key, value: message.value?.toString() ?? '', headers });
        byKey.set(key, messages);
      },
    });
  });

  afterAll(async () => {
    await reader.disconnect();
    await producer.disconnect();
  });

  async function received(key: string, count: number): Promise<ReceivedMessage[]> {
    const deadline = Date.now() + 60_000;
    while ((byKey.get(key)?.length ?? 0) < count) {
      if (Date.now() > deadline) throw new Error(`only ${byKey.get(key)?.length ?? 0} of ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return byKey.get(key)!;
  }

  eventProducerConformance(() => ({ producer, received }));
});
