import { type TopicEnvelope, Topics, toTenantId } from '@kb/contracts';
import { consumerLog, EventConsumer } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { AttachmentIntake } from '../attachments/attachment-intake';
import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { KAFKA } from '../platform/tokens';
import { DocumentsService, type StatusEvent } from './documents.service';

/**
 * Pipeline status events in; they move documents forward (`DocumentsService.applyStatuses`), a
 * fetched batch in one statement: a document sends four, and one UPDATE each was most of this
 * service's share of an ingest's database round trips. A mail's attachments, reported on one of
 * them, then become documents (`AttachmentIntake`, docs/adr/0048).
 */
@Injectable()
export class DocumentStatusConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(DOCUMENT_CONFIG) config: Pick<DocumentConfig, 'KAFKA_GROUP_ID'>,
    documents: DocumentsService,
    attachments: AttachmentIntake,
  ) {
    const apply = async (events: StatusEvent[]) => {
      await documents.applyStatuses(events);
      await attachments.receive(events);
    };
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: {
        [Topics.documentStatus]: (event) => apply([statusEventOf(event)]),
      },
      batchHandlers: {
        [Topics.documentStatus]: (events) => apply(events.map(statusEventOf)),
      },
      log: consumerLog('StatusConsumer'),
      // Up to a fifth of a second more before a status shows, for batches of many events, not
      // one; idle, five fetches a second (each costs the broker and this process a little).
      fetch: { minBytes: 16 * 1024, maxWaitMs: 200 },
    });
  }
}

function statusEventOf(envelope: TopicEnvelope<typeof Topics.documentStatus>): StatusEvent {
  return {
    tenantId: toTenantId(envelope.tenantId),
    event: envelope.payload,
    at: new Date(envelope.occurredAt),
  };
}
