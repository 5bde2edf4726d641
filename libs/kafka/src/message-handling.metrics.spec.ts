import { randomUUID } from 'node:crypto';

import { newEnvelope, Topics } from '@kb/contracts';
import { PermanentError } from '@kb/errors';
import { metrics } from '@opentelemetry/api';
import { metrics as sdk } from '@opentelemetry/sdk-node';
import type { KafkaMessage, Producer } from 'kafkajs';

import type { DeliveryCounter } from './delivery-count';
import type { ConsumerOptions } from './event-consumer';
import type { BatchContext } from './message-handling';
import { Waiter } from './retry-wait';

/** Reads what the instruments recorded, on demand. */
class CollectingReader extends sdk.MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const reader = new CollectingReader();
const provider = new sdk.MeterProvider({ readers: [reader] });
// The instruments are created when the module loads: the provider must be in place before.
metrics.setGlobalMeterProvider(provider);
const { MessageHandling } =
  jest.requireActual<typeof import('./message-handling')>('./message-handling');

afterAll(async () => {
  await provider.shutdown();
  metrics.disable();
});

/** Each data point of `name` as its attributes and value. */
async function points(name: string): Promise<Array<{ labels: object; value: unknown }>> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) =>
      metric.dataPoints.map((point) => ({ labels: point.attributes, value: point.value })),
    );
}

const context: BatchContext = {
  topic: Topics.document,
  partition: 0,
  heartbeat: async () => undefined,
  commit: async () => undefined,
};

const message = (payload: object): KafkaMessage =>
  ({
    key: null,
    offset: '0',
    value: Buffer.from(JSON.stringify(newEnvelope('kb.document', 'acme', payload))),
  }) as unknown as KafkaMessage;

const removal = (knowledgeBaseId: string) => ({
  kind: 'documents_removed',
  documentIds: [randomUUID()],
  knowledgeBaseId,
  cause: 'emptied',
  jobId: randomUUID(),
  batch: 0,
  batches: 1,
});

function handling(groupId: string, handler: () => Promise<void>) {
  const options: ConsumerOptions = {
    groupId,
    handlers: { [Topics.document]: handler },
    initialBackoffMs: 1,
  };
  const deliveries = { begin: async () => 1, forgive: async () => undefined };
  const dlq = { send: async () => [] } as unknown as Producer;
  return new MessageHandling(
    options,
    deliveries as unknown as DeliveryCounter,
    dlq,
    new Waiter(),
    () => false,
  );
}

describe('the consumer metrics carry the knowledge base an event names', () => {
  it('counts a handled event under its knowledge base, and one naming none without the label', async () => {
    const consumer = handling('spec-handled', async () => undefined);
    await consumer.handle(context, message(removal('handbook')));
    await consumer.handle(context, message({ kind: 'deleted', documentId: randomUUID() }));
    const handled = (await points('kb_events_handled_total')).filter(
      (point) => (point.labels as { group?: string }).group === 'spec-handled',
    );
    expect(handled).toEqual(
      expect.arrayContaining([
        {
          labels: { topic: Topics.document, group: 'spec-handled', knowledge_base: 'handbook' },
          value: 1,
        },
        { labels: { topic: Topics.document, group: 'spec-handled' }, value: 1 },
      ]),
    );
    const durations = (await points('kb_event_handle_duration_ms')).map((p) => p.labels);
    expect(durations).toContainEqual({
      topic: Topics.document,
      group: 'spec-handled',
      knowledge_base: 'handbook',
    });
  });

  it('counts a dead letter under the knowledge base of its event, with its reason', async () => {
    const consumer = handling('spec-dead', async () => {
      throw new PermanentError('indexing_error', 'no');
    });
    await consumer.handle(context, message(removal('legal')));
    expect(await points('kb_events_dead_lettered_total')).toContainEqual({
      labels: {
        topic: Topics.document,
        group: 'spec-dead',
        knowledge_base: 'legal',
        reason: 'indexing_error',
      },
      value: 1,
    });
  });

  it('counts each event of a batch under its own knowledge base', async () => {
    const consumer = handling('spec-batch', async () => undefined);
    const batch = [removal('handbook'), removal('handbook'), removal('legal')].map(message);
    expect(await consumer.handleAll(context, batch, async () => undefined)).toBe(true);
    const handled = (await points('kb_events_handled_total'))
      .filter((point) => (point.labels as { group?: string }).group === 'spec-batch')
      .map((point) => [(point.labels as { knowledge_base?: string }).knowledge_base, point.value]);
    expect(handled.sort()).toEqual([
      ['handbook', 2],
      ['legal', 1],
    ]);
    // One batch, one duration: in several knowledge bases.
    const durations = (await points('kb_event_handle_duration_ms')).map((p) => p.labels);
    expect(durations).toContainEqual({
      topic: Topics.document,
      group: 'spec-batch',
      knowledge_base: '_multiple',
    });
  });
});
