import { randomUUID } from 'node:crypto';

import { deadLetterTopic, newEnvelope, type TopicEnvelope, Topics } from '@kb/contracts';
import { type Kafka, type KafkaMessage, Partitioners } from 'kafkajs';

import {
  createKafka,
  type DeadLetter,
  ensureTopics,
  EventConsumer,
  instanceGroup,
  KafkaEventProducer,
  PermanentError,
} from '../src';

jest.setTimeout(90_000);

const kafkaBrokers = () => process.env['KAFKA_BROKERS']!.split(',');

/** Waits up to a minute for `condition`, checking every 50 ms. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs against the real broker from `npm run infra:up`. Each test uses its own group and documents. */
describe('EventConsumer against Kafka', () => {
  let kafka: Kafka;
  let producer: KafkaEventProducer;
  const consumers: EventConsumer[] = [];

  beforeAll(async () => {
    kafka = createKafka({
      brokers: process.env['KAFKA_BROKERS']!.split(','),
      clientId: 'kafka-int-test',
    });
    await ensureTopics(kafka, Object.values(Topics));
    producer = new KafkaEventProducer(kafka);
    await producer.connect();
  });

  /** The groups this file made: their dead-letter topics are deleted at the end. */
  const groups: string[] = [];
  const testGroup = (): string => {
    const groupId = `test-${randomUUID()}`;
    groups.push(groupId);
    return groupId;
  };

  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.stop()));
    await producer.disconnect();
    const admin = kafka.admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const made = groups.map(deadLetterTopic).filter((topic) => existing.has(topic));
      if (made.length > 0) await admin.deleteTopics({ topics: made });
    } finally {
      await admin.disconnect();
    }
  });

  const statusPayload = (documentId: string) => ({
    documentId,
    version: 1,
    status: 'parsing' as const,
  });

  /** Reads the group's dead-letter topic until `count` messages with `key` arrived. */
  async function readDeadLetters(
    groupId: string,
    key: string,
    count: number,
  ): Promise<KafkaMessage[]> {
    const reader = kafka.consumer({ groupId: `${groupId}-dlq-reader` });
    const messages: KafkaMessage[] = [];
    await reader.connect();
    await reader.subscribe({ topic: deadLetterTopic(groupId), fromBeginning: true });
    await new Promise<void>((resolve) => {
      void reader.run({
        eachMessage: async ({ message }) => {
          if (message.key?.toString() === key) messages.push(message);
          if (messages.length >= count) resolve();
        },
      });
    });
    await reader.disconnect();
    return messages;
  }

  it('delivers valid events to the typed handler, retrying a transient failure', async () => {
    const groupId = testGroup();
    await groupAtEnd(groupId);
    const documentId = randomUUID();
    const seen: TopicEnvelope<typeof Topics.documentStatus>[] = [];
    let attempts = 0;
    const done = new Promise<void>((resolve) => {
      const consumer = new EventConsumer(kafka, {
        groupId,
        initialBackoffMs: 10,
        handlers: {
          [Topics.documentStatus]: async (event) => {
            if (event.payload.documentId !== documentId) return;
            attempts += 1;
            if (attempts < 3) throw new Error('transient');
            seen.push(event);
            resolve();
          },
        },
      });
      consumers.push(consumer);
      void consumer.start();
    });
    await producer.publish({
      topic: Topics.documentStatus,
      tenantId: 't1',
      key: documentId,
      payload: statusPayload(documentId),
    });
    await done;
    expect(attempts).toBe(3);
    expect(seen[0]).toMatchObject({
      tenantId: 't1',
      type: 'kb.document.status',
      payload: statusPayload(documentId),
    });
  });

  it('dead-letters a malformed message and a permanent failure, and keeps consuming', async () => {
    const groupId = testGroup();
    await groupAtEnd(groupId);
    const permanent = randomUUID();
    const good = randomUUID();
    // A new key tells this test's messages apart from those other runs left on the topic.
    const key = randomUUID();
    const letters: DeadLetter[] = [];
    const handled: string[] = [];
    const finished = new Promise<void>((resolve) => {
      const consumer = new EventConsumer(kafka, {
        groupId,
        initialBackoffMs: 10,
        handlers: {
          [Topics.documentStatus]: async (event) => {
            const id = event.payload.documentId;
            if (id === permanent) throw new PermanentError('no_text', 'nothing to read');
            if (id === good) {
              handled.push(id);
              resolve();
            }
          },
        },
        onDeadLetter: async (letter) => {
          if (letter.key === key) letters.push(letter);
        },
      });
      consumers.push(consumer);
      void consumer.start();
    });
    // All three share one key, so they land on one partition in this order.
    const raw = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await raw.connect();
    await raw.send({
      topic: Topics.documentStatus,
      messages: [
        { key, value: '{"not":"an envelope"}' },
        {
          key,
          value: JSON.stringify(newEnvelope('kb.document.status', 't1', statusPayload(permanent))),
        },
        {
          key,
          value: JSON.stringify(newEnvelope('kb.document.status', 't1', statusPayload(good))),
        },
      ],
    });
    await raw.disconnect();
    await finished;
    expect(handled).toEqual([good]);
    expect(letters.map((l) => l.reason)).toEqual(['malformed_message', 'no_text']);
    const dead = await readDeadLetters(groupId, key, 2);
    expect(dead.map((m) => m.headers?.['x-dlq-reason']?.toString())).toEqual([
      'malformed_message',
      'no_text',
    ]);
    expect(dead[0]!.value?.toString()).toBe('{"not":"an envelope"}');
  });

  it("dead-letters an instance group's messages into its service's topic, making none of its own", async () => {
    const service = testGroup();
    const { groupId, deadLetterGroup } = instanceGroup(service);
    expect(deadLetterGroup).toBe(service);
    expect(groupId).toMatch(new RegExp(`^${service}-.+-[0-9a-f]{8}$`));
    await groupAtEnd(groupId);
    const key = randomUUID();
    const letters: DeadLetter[] = [];
    const consumer = new EventConsumer(kafka, {
      groupId,
      deadLetterGroup,
      handlers: { [Topics.documentStatus]: async () => undefined },
      onDeadLetter: async (letter) => {
        if (letter.key === key) letters.push(letter);
      },
    });
    consumers.push(consumer);
    void consumer.start();
    await until(() => consumer.isJoined);
    const raw = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await raw.connect();
    await raw.send({
      topic: Topics.documentStatus,
      messages: [{ key, value: '{"not":"an envelope"}' }],
    });
    await raw.disconnect();
    await until(() => letters.length === 1);
    const dead = await readDeadLetters(service, key, 1);
    expect(dead[0]!.headers?.['x-dlq-reason']?.toString()).toBe('malformed_message');
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.listTopics()).not.toContain(deadLetterTopic(groupId));
    } finally {
      await admin.disconnect();
    }
  });

  /**
   * Points a new group at the topic's end, so it sees only what a test publishes next: each
   * partition's high watermark committed as the group's offset. (kafkajs' `resetOffsets` commits
   * -1, which a consumer reads as no offset at all: with `fromBeginning` it then read every status
   * event earlier runs left on the broker, over 100,000 on a long-used machine.)
   */
  async function groupAtEnd(groupId: string): Promise<void> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const ends = await admin.fetchTopicOffsets(Topics.documentStatus);
      await admin.setOffsets({
        groupId,
        topic: Topics.documentStatus,
        partitions: ends.map(({ partition, high }) => ({ partition, offset: high })),
      });
    } finally {
      await admin.disconnect();
    }
  }

  it('hands a fetched batch to the batch handler at once, and goes one by one when it fails for good', async () => {
    const groupId = testGroup();
    await groupAtEnd(groupId);
    const key = randomUUID();
    const sent = new Set<string>();
    const poison = randomUUID();
    const batches: string[][] = [];
    const single: string[] = [];
    const letters: DeadLetter[] = [];
    const mine = (event: TopicEnvelope<typeof Topics.documentStatus>) =>
      sent.has(event.payload.documentId);
    const consumer = new EventConsumer(kafka, {
      groupId,
      initialBackoffMs: 10,
      handlers: {
        [Topics.documentStatus]: async (event) => {
          if (!mine(event)) return;
          if (event.payload.documentId === poison) {
            throw new PermanentError('no_text', 'nothing to read');
          }
          single.push(event.payload.documentId);
        },
      },
      batchHandlers: {
        [Topics.documentStatus]: async (events) => {
          const own = events.filter(mine).map((e) => e.payload.documentId);
          if (own.includes(poison)) throw new PermanentError('no_text', 'a poison in the batch');
          batches.push(own);
        },
      },
      onDeadLetter: async (letter) => {
        if (letter.key === key) letters.push(letter);
      },
    });
    consumers.push(consumer);
    void consumer.start();
    const handled = () => batches.flat().length + single.length + letters.length;
    // In the group first, so messages sent in one produce request arrive together in one fetch.
    await until(() => consumer.isJoined);
    const raw = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await raw.connect();
    const send = async (part: string[]) => {
      part.forEach((id) => sent.add(id));
      await raw.send({
        topic: Topics.documentStatus,
        messages: part.map((id) => ({
          key,
          value: JSON.stringify(newEnvelope('kb.document.status', 't1', statusPayload(id))),
        })),
      });
      await until(() => handled() >= sent.size);
    };
    // Three healthy messages together. A rebalance right after joining can still split a fetch
    // on a loaded machine (the batch is then stale and goes one by one): three more, at most
    // three times, until one batch of several reached the batch handler.
    for (let round = 0; round < 3 && !batches.some((batch) => batch.length > 1); round++) {
      await send([randomUUID(), randomUUID(), randomUUID()]);
    }
    // Then a batch with the poison in it: it fails for good, so each message meets its own verdict.
    const rest = [randomUUID(), poison, randomUUID()];
    await send(rest);
    await raw.disconnect();
    const stored = [...batches.flat(), ...single];
    // Every message but the poison handled once, the poison alone dead-lettered.
    expect(stored.sort()).toEqual([...sent].filter((id) => id !== poison).sort());
    expect(letters.map((l) => l.reason)).toEqual(['no_text']);
    expect(batches.some((batch) => batch.length > 1)).toBe(true);
    expect(single).toEqual(expect.arrayContaining(rest.filter((id) => id !== poison)));
  });

  it('with a fetch wait, hands messages sent one by one within it over as one batch', async () => {
    const groupId = testGroup();
    await groupAtEnd(groupId);
    const sent: string[] = [];
    const batches: string[][] = [];
    const single: string[] = [];
    const consumer = new EventConsumer(kafka, {
      groupId,
      handlers: {
        [Topics.documentStatus]: async (event) => {
          if (sent.includes(event.payload.documentId)) single.push(event.payload.documentId);
        },
      },
      batchHandlers: {
        [Topics.documentStatus]: async (events) => {
          const own = events.map((e) => e.payload.documentId).filter((id) => sent.includes(id));
          if (own.length > 0) batches.push(own);
        },
      },
      fetch: { minBytes: 1024 * 1024, maxWaitMs: 5_000 },
    });
    consumers.push(consumer);
    void consumer.start();
    await until(() => consumer.isJoined);
    // Five produce requests 300 ms apart, one key (one partition: a fetch hands each partition
    // its own batch). Answered at once, each would be a fetch of its own, a batch of one; a fetch
    // that waits for 1 MiB or 5 s takes them together. A rebalance right after joining can make
    // a batch stale (it then goes one by one): up to three rounds.
    for (let round = 0; round < 3 && !batches.some((batch) => batch.length > 1); round++) {
      for (let i = 0; i < 5; i++) {
        const id = randomUUID();
        sent.push(id);
        await producer.publish({
          topic: Topics.documentStatus,
          tenantId: 't1',
          key: groupId,
          payload: statusPayload(id),
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      await until(() => new Set([...batches.flat(), ...single]).size >= sent.length);
    }
    expect(new Set([...batches.flat(), ...single])).toEqual(new Set(sent));
    expect(batches.some((batch) => batch.length > 1)).toBe(true);
  });

  const refused = () =>
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED' });

  it('waits out a transient error for as long as it lasts, without dead-lettering', async () => {
    const groupId = testGroup();
    const documentId = randomUUID();
    await groupAtEnd(groupId);
    const letters: DeadLetter[] = [];
    let attempts = 0;
    const done = new Promise<void>((resolve) => {
      const consumer = new EventConsumer(kafka, {
        groupId,
        // Two tries would dead-letter any other error; a dependency being away is waited out.
        maxAttempts: 2,
        initialBackoffMs: 10,
        maxTransientBackoffMs: 40,
        handlers: {
          [Topics.documentStatus]: async (event) => {
            if (event.payload.documentId !== documentId) return;
            attempts += 1;
            if (attempts <= 8) throw refused();
            resolve();
          },
        },
        onDeadLetter: async (letter) => {
          if (letter.key === documentId) letters.push(letter);
        },
      });
      consumers.push(consumer);
      void consumer.start();
    });
    await producer.publish({
      topic: Topics.documentStatus,
      tenantId: 't1',
      key: documentId,
      payload: statusPayload(documentId),
    });
    await done;
    expect(attempts).toBe(9);
    expect(letters).toEqual([]);
  });

  // Three processes join one group in turn, each after the last left mid-handle: three rebalances,
  // which on a broker that has just been created (its offsets topic made on first use) took more
  // than the file's 90 s once in CI. What it proves is a count, not a speed.
  it('dead-letters a message whose handling killed the consumer maxDeliveries times', async () => {
    const groupId = testGroup();
    const documentId = randomUUID();
    await groupAtEnd(groupId);
    const maxDeliveries = 2;
    let calls = 0;
    // Each "process" has its own client: nothing but Kafka carries the count from one to the next.
    const startProcess = (onDeadLetter?: (letter: DeadLetter) => Promise<void>) => {
      let entered!: () => void;
      let die!: () => void;
      const inHandler = new Promise<void>((resolve) => (entered = resolve));
      const death = new Promise<void>((resolve) => (die = resolve));
      const consumer = new EventConsumer(
        createKafka({ brokers: kafkaBrokers(), clientId: `crash-${randomUUID()}` }),
        {
          groupId,
          maxDeliveries,
          sessionTimeoutMs: 10_000,
          handlers: {
            [Topics.documentStatus]: async (event) => {
              if (event.payload.documentId !== documentId) return;
              calls += 1;
              entered();
              await death;
              throw new Error('out of memory'); // what the dying process never gets to report
            },
          },
          ...(onDeadLetter ? { onDeadLetter } : {}),
        },
      );
      return { consumer, inHandler, die };
    };
    for (let i = 0; i < maxDeliveries; i++) {
      const { consumer, inHandler, die } = startProcess();
      await consumer.start();
      if (i === 0) {
        await producer.publish({
          topic: Topics.documentStatus,
          tenantId: 't1',
          key: documentId,
          payload: statusPayload(documentId),
        });
      }
      await inHandler;
      // Stopped mid-handle: no outcome, no commit of the message; the next one gets it again.
      const stopped = consumer.stop();
      die();
      await stopped;
    }
    // The third process must dead-letter the message without handling it. Should its handler be
    // called instead (a lost count), the test fails at once on `calls` rather than hanging there.
    const letters: DeadLetter[] = [];
    const outcome = new Promise<void>((resolve, reject) => {
      const { consumer, inHandler, die } = startProcess(async (letter) => {
        if (letter.key !== documentId) return;
        letters.push(letter);
        resolve();
      });
      consumers.push(consumer);
      void inHandler.then(() => {
        die();
        resolve();
      });
      consumer.start().catch(reject);
    });
    await outcome;
    expect(calls).toBe(maxDeliveries);
    expect(letters).toEqual([
      expect.objectContaining({ reason: 'delivery_limit', key: documentId, permanent: false }),
    ]);
  }, 240_000);
});
