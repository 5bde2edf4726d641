import { type TopicEnvelope, Topics, toTenantId } from '@kb/contracts';
import {
  concurrentBatchHandler,
  consumerLog,
  EventConsumer,
  type EventProducer,
  markFailedOnDeadLetter,
} from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { INDEXING_CONFIG, type IndexingConfig } from '../config/indexing.config';
import { EVENT_PRODUCER, KAFKA } from '../platform/tokens';
import { AccessReconciliationService } from './access-reconciliation.service';
import { IndexingService } from './indexing.service';

/**
 * Documents of a partition's fetched `chunks embedded` batch indexed at once (a document of more
 * than 32 chunks counts as several): each costs a dozen round trips to Postgres, S3 and Kafka, which
 * overlap instead of adding up (docs/adr/0029, Ingest).
 */
export const INDEXING_DOCUMENTS_IN_FLIGHT = 8;

/**
 * Thin Kafka adapter: `chunks embedded` and document lifecycle events in, one service call each.
 * Both topics share one consumer (one group, as before), so their offsets carry on. A partition's
 * `chunks embedded` batch is handled concurrently, one document's events in order; lifecycle
 * events (deletes, ACL and attribute changes) keep their order within a tenant, tenants overlap.
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
    const index = (event: TopicEnvelope<typeof Topics.chunksEmbedded>) =>
      indexing.indexDocument(toTenantId(event.tenantId), event.payload);
    const onDocumentEvent = async ({
      tenantId,
      payload,
    }: TopicEnvelope<typeof Topics.document>): Promise<void> => {
      if (payload.kind === 'access_snapshot') {
        await access.reconcile(toTenantId(tenantId), payload);
      } else {
        await indexing.onDocumentEvent(toTenantId(tenantId), payload);
      }
    };
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      batchHandlers: {
        [Topics.chunksEmbedded]: concurrentBatchHandler(index, {
          keyOf: (event) => `${event.tenantId}/${event.payload.documentId}`,
          weightOf: (event) => Math.ceil(event.payload.chunkCount / 32),
          budget: INDEXING_DOCUMENTS_IN_FLIGHT,
        }),
        // In order within a tenant, as one at a time (an access snapshot covers the tenant's
        // documents), but a batch at a time: one offset commit for the batch, not one a message.
        [Topics.document]: concurrentBatchHandler(onDocumentEvent, {
          keyOf: (event) => event.tenantId,
          budget: INDEXING_DOCUMENTS_IN_FLIGHT,
        }),
      },
      handlers: {
        [Topics.chunksEmbedded]: index,
        [Topics.document]: onDocumentEvent,
      },
      onDeadLetter: markFailedOnDeadLetter(producer, 'indexing_error'),
      log: consumerLog('EmbeddedConsumer'),
    });
  }
}
