import { Topics } from '@kb/contracts';

import { eventProducerConformance } from '../../../kafka/test/support/conformance';
import { MemoryEventProducer } from './memory-event-producer';

describe('MemoryEventProducer', () => {
  describe('conformance', () =>
    eventProducerConformance(() => {
      const producer = new MemoryEventProducer();
      return {
        producer,
        received: async (key, count) => {
          const messages = producer.messages.filter((m) => m.key === key);
          if (messages.length < count) throw new Error(`${messages.length} of ${count} published`);
          return messages;
        },
      };
    }));

  it('hands back the typed envelopes of one topic, and fails on a payload consumers would reject', async () => {
    const producer = new MemoryEventProducer();
    const documentId = '5b0f8a38-3f3e-4b0e-9a53-0c6f55d4a1b2';
    await producer.publish({
      topic: Topics.documentStatus,
      tenantId: 't1',
      key: documentId,
      payload: { documentId, version: 2, status: 'indexed' },
    });
    await producer.publishRaw([
      { topic: Topics.acl, key: 't1', value: '{"not":"an envelope"}', headers: {} },
    ]);
    expect(producer.events(Topics.documentStatus).map((e) => e.payload)).toEqual([
      { documentId, version: 2, status: 'indexed' },
    ]);
    expect(() => producer.events(Topics.acl)).toThrow();
  });
});
