import { Topics, toTenantId } from '@kb/contracts';
import { consumerLog, EventConsumer, type EventProducer, markFailedOnDeadLetter } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { INDEXING_CONFIG, type IndexingConfig } from '../config/indexing.config';
import { EVENT_PRODUCER, KAFKA } from '../platform/tokens';
import { AccessReconciliationService } from './access-reconciliation.service';
import { IndexingService } from './indexing.service';

/**
 * Thin Kafka adapter: `chunks embedded` and document lifecycle events in, one service call each.
 * Both topics share one consumer (one group, as before), so their offsets carry on.
 */
@Injectable()
export class IndexingConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(EVENT_PRODUCER) producer: EventProducer,
    @Inject(INDEXING_CONFIG) config: Pick<IndexingConfig, 'KAFKA_GROUP_ID'>,
    indexing: IndexingService,
    access: AccessReconciliationService,
  ) {
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: {
        [Topics.chunksEmbedded]: (event) =>
          indexing.indexDocument(toTenantId(event.tenantId), event.payload),
        [Topics.document]: async ({ tenantId, payload }) => {
          if (payload.kind === 'access_snapshot') {
            await access.reconcile(toTenantId(tenantId), payload);
          } else {
            await indexing.onDocumentEvent(toTenantId(tenantId), payload);
          }
        },
      },
      onDeadLetter: markFailedOnDeadLetter(producer, 'indexing_error'),
      log: consumerLog('EmbeddedConsumer'),
    });
  }
}
