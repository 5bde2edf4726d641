import { type TopicEnvelope, Topics } from '@kb/contracts';
import { consumerLog, EventConsumer } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { WEBHOOK_CONFIG, type WebhookConfig } from '../config/webhook.config';
import { KAFKA } from '../platform/tokens';
import { WebhooksService } from '../webhooks/webhooks.service';
import {
  fromCollectionEvent,
  fromDocumentEvent,
  fromDocumentStatus,
  type WebhookEvent,
} from './webhook-event.mapper';

/** Maps each topic's envelope to the webhook event it owes, if any. */
const mappers = {
  [Topics.documentStatus]: fromDocumentStatus,
  [Topics.document]: fromDocumentEvent,
  [Topics.collection]: fromCollectionEvent,
} satisfies {
  [T in WebhookTopic]: (envelope: TopicEnvelope<T>) => WebhookEvent | undefined;
};

type WebhookTopic =
  typeof Topics.documentStatus | typeof Topics.document | typeof Topics.collection;

/**
 * The three topics webhooks follow, in a consumer group of webhook-service's own. A handler only
 * records what is owed (one insert for a fetched batch); sending and retrying happen in
 * `DeliveryDispatcher`, so a slow or dead receiver never holds a partition.
 */
@Injectable()
export class WebhookEventsConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(WEBHOOK_CONFIG) config: Pick<WebhookConfig, 'KAFKA_GROUP_ID'>,
    webhooks: WebhooksService,
  ) {
    const recordAll =
      <T extends WebhookTopic>(topic: T) =>
      async (envelopes: TopicEnvelope<T>[]): Promise<void> => {
        const owed = envelopes.flatMap((envelope) => {
          const event = (mappers[topic] as (e: TopicEnvelope<T>) => WebhookEvent | undefined)(
            envelope,
          );
          return event ? [{ tenantId: envelope.tenantId, event }] : [];
        });
        // Most of what the pipeline says is progress no webhook carries: no statement at all.
        if (owed.length > 0) await webhooks.recordAll(owed);
      };
    const recordOne =
      <T extends WebhookTopic>(topic: T) =>
      (envelope: TopicEnvelope<T>): Promise<void> =>
        recordAll(topic)([envelope]);
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: {
        [Topics.documentStatus]: recordOne(Topics.documentStatus),
        [Topics.document]: recordOne(Topics.document),
        [Topics.collection]: recordOne(Topics.collection),
      },
      batchHandlers: {
        [Topics.documentStatus]: recordAll(Topics.documentStatus),
        [Topics.document]: recordAll(Topics.document),
        [Topics.collection]: recordAll(Topics.collection),
      },
      log: consumerLog(WebhookEventsConsumer.name),
      // Nobody waits on these to the millisecond: a fetch gathers up to a second of events (a
      // document sends five) instead of one or two each time; idle, it asks once a second.
      fetch: { minBytes: 16 * 1024, maxWaitMs: 1_000 },
    });
  }
}
