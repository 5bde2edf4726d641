import { randomUUID } from 'node:crypto';

import { parseEnvelope, topicEventTypes, Topics } from '@kb/contracts';

import type { EventProducer } from '../../src';

/** One message as a consumer of the topic receives it. */
export interface ReceivedMessage {
  topic: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

export interface ProducerHarness {
  producer: EventProducer;
  /** The messages published with `key` (any topic), once `count` of them have arrived. */
  received(key: string, count: number): Promise<ReceivedMessage[]>;
}

/**
 * What every EventProducer promises, run by each implementation's test file (Kafka against the
 * local broker, the in-memory one in @kb/testing). Each test uses its own document ids as keys.
 */
export function eventProducerConformance(harness: () => ProducerHarness): void {
  const status = (documentId: string, status: 'parsing' | 'embedding' | 'indexing') => ({
    documentId,
    version: 1,
    status,
  });
  const inTopic = (messages: ReceivedMessage[], topic: string) =>
    messages.filter((m) => m.topic === topic);

  it('publishes the payload in the envelope of its topic, keyed as asked', async () => {
    const { producer, received } = harness();
    const documentId = randomUUID();
    await producer.publish({
      topic: Topics.documentStatus,
      tenantId: 't1',
      key: documentId,
      payload: status(documentId, 'parsing'),
    });
    const [message] = await received(documentId, 1);
    expect(message).toMatchObject({ topic: Topics.documentStatus, key: documentId });
    const envelope = parseEnvelope(Topics.documentStatus, JSON.parse(message!.value));
    expect(envelope).toMatchObject({
      type: topicEventTypes[Topics.documentStatus],
      schemaVersion: 1,
      tenantId: 't1',
      payload: status(documentId, 'parsing'),
    });
    expect(Date.parse(envelope.occurredAt)).toBeLessThanOrEqual(Date.now());
  });

  it('publishes many events at once, each in its own envelope, in order per key and topic', async () => {
    const { producer, received } = harness();
    const documentId = randomUUID();
    await expect(producer.publishMany([])).resolves.toBeUndefined();
    await producer.publishMany([
      {
        topic: Topics.documentStatus,
        tenantId: 't1',
        key: documentId,
        payload: status(documentId, 'parsing'),
      },
      {
        topic: Topics.acl,
        tenantId: 't1',
        key: documentId,
        payload: { version: 7, change: 'role_assigned' },
      },
      {
        topic: Topics.documentStatus,
        tenantId: 't1',
        key: documentId,
        payload: status(documentId, 'embedding'),
      },
    ]);
    const messages = await received(documentId, 3);
    const statuses = inTopic(messages, Topics.documentStatus).map(
      (m) => parseEnvelope(Topics.documentStatus, JSON.parse(m.value)).payload.status,
    );
    expect(statuses).toEqual(['parsing', 'embedding']);
    const [acl] = inTopic(messages, Topics.acl);
    expect(parseEnvelope(Topics.acl, JSON.parse(acl!.value)).payload).toEqual({
      version: 7,
      change: 'role_assigned',
    });
    const ids = messages.map((m) => (JSON.parse(m.value) as { id: string }).id);
    expect(new Set(ids).size).toBe(3);
  });

  it('sends already-serialized envelopes and their headers as they are, in order', async () => {
    const { producer, received } = harness();
    const documentId = randomUUID();
    const value = (n: number) => JSON.stringify({ stored: 'at write time', documentId, n });
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    await producer.publishRaw([
      { topic: Topics.documentStatus, key: documentId, value: value(1), headers: { traceparent } },
      { topic: Topics.documentStatus, key: documentId, value: value(2), headers: {} },
      { topic: Topics.documentStatus, key: documentId, value: value(3), headers: {} },
    ]);
    await producer.publishRaw([]);
    const messages = await received(documentId, 3);
    expect(messages).toEqual([
      { topic: Topics.documentStatus, key: documentId, value: value(1), headers: { traceparent } },
      { topic: Topics.documentStatus, key: documentId, value: value(2), headers: {} },
      { topic: Topics.documentStatus, key: documentId, value: value(3), headers: {} },
    ]);
  });

  it('connects once however often asked, and publishes again after a disconnect', async () => {
    const { producer, received } = harness();
    const documentId = randomUUID();
    await producer.connect();
    await producer.connect();
    await producer.disconnect();
    await producer.publish({
      topic: Topics.documentStatus,
      tenantId: 't1',
      key: documentId,
      payload: status(documentId, 'indexing'),
    });
    expect((await received(documentId, 1)).map((m) => m.key)).toEqual([documentId]);
  });
}
