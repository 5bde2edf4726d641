import { Topics } from '@kb/contracts';
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

/**
 * The three topics webhooks follow, in a consumer group of webhook-service's own. A handler only
 * records what is owed (one insert); sending and retrying happen in `DeliveryDispatcher`, so a
 * slow or dead receiver never holds a partition.
 */
@Injectable()
export class WebhookEventsConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(WEBHOOK_CONFIG) config: Pick<WebhookConfig, 'KAFKA_GROUP_ID'>,
    webhooks: WebhooksService,
  ) {
    const record = async (tenantId: string, event: WebhookEvent | undefined): Promise<void> => {
      if (event) await webhooks.record(tenantId, event);
    };
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: {
        [Topics.documentStatus]: (envelope) =>
          record(envelope.tenantId, fromDocumentStatus(envelope)),
        [Topics.document]: (envelope) => record(envelope.tenantId, fromDocumentEvent(envelope)),
        [Topics.collection]: (envelope) => record(envelope.tenantId, fromCollectionEvent(envelope)),
      },
      log: consumerLog(WebhookEventsConsumer.name),
    });
  }
}
