import { newEnvelope, Topics } from '@kb/contracts';
import type { KafkaMessage, Message, Producer } from 'kafkajs';

import type { DeliveryCounter } from './delivery-count';
import type { BatchContext } from './message-handling';
import { MessageHandling } from './message-handling';
import { Waiter } from './retry-wait';

const context: BatchContext = {
  topic: Topics.document,
  partition: 0,
  heartbeat: async () => undefined,
  commit: async () => undefined,
};

/** An access snapshot of `count` documents whose ids are not UUIDs: one schema issue each. */
const badSnapshot = (count: number): KafkaMessage =>
  ({
    key: null,
    offset: '0',
    value: Buffer.from(
      JSON.stringify(
        newEnvelope('kb.document', 'acme', {
          kind: 'access_snapshot',
          documents: Array.from({ length: count }, (_, i) => ({
            documentId: `not-a-uuid-${i}`,
            metaVersion: 1,
            principals: ['user:ann'],
          })),
        }),
      ),
    ),
  }) as unknown as KafkaMessage;

function handling() {
  const logged: Array<{ message: string; context: Record<string, unknown> }> = [];
  const sent: Message[] = [];
  const dlq = {
    send: async (record: { messages: Message[] }) => {
      sent.push(...record.messages);
      return [];
    },
  } as unknown as Producer;
  const deliveries = { begin: async () => 1, forgive: async () => undefined };
  const consumer = new MessageHandling(
    {
      groupId: 'spec-log',
      handlers: { [Topics.document]: async () => undefined },
      log: (message, context) => logged.push({ message, context }),
    },
    deliveries as unknown as DeliveryCounter,
    dlq,
    new Waiter(),
    () => false,
  );
  return { consumer, logged, sent };
}

describe('a dead letter of a large malformed event', () => {
  it('logs and heads the letter with the start of its error and its full length, not all of it', async () => {
    const { consumer, logged, sent } = handling();
    await consumer.handle(context, badSnapshot(500));

    const line = logged.find((l) => l.message === 'message dead-lettered')?.context;
    expect(line).toMatchObject({ reason: 'malformed_message' });
    const error = String(line?.['error']);
    expect(error).toContain('documentId');
    expect(error).toMatch(/… \(\d{5,} characters\)$/);
    expect(error.length).toBeLessThan(1100);
    expect(sent).toHaveLength(1);
    expect(String(sent[0]!.headers?.['x-dlq-error']).length).toBe(1000);
  });

  it('logs a short error as it is', async () => {
    const { consumer, logged } = handling();
    await consumer.handle(context, badSnapshot(1));

    const error = String(
      logged.find((l) => l.message === 'message dead-lettered')?.context['error'],
    );
    expect(error).toContain('Invalid UUID');
    expect(error).not.toContain('characters)');
  });
});
