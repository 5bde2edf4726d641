import { Topics, toTenantId } from '@kb/contracts';
import { consumerLog, EventConsumer } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { KAFKA } from '../platform/tokens';
import { DocumentsService } from './documents.service';

/** Pipeline status events in; each moves a document forward (`DocumentsService.applyStatus`). */
@Injectable()
export class DocumentStatusConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(DOCUMENT_CONFIG) config: Pick<DocumentConfig, 'KAFKA_GROUP_ID'>,
    documents: DocumentsService,
  ) {
    this.consumer = new EventConsumer(kafka, {
      groupId: config.KAFKA_GROUP_ID,
      handlers: {
        [Topics.documentStatus]: (event) =>
          documents.applyStatus(
            toTenantId(event.tenantId),
            event.payload,
            new Date(event.occurredAt),
          ),
      },
      log: consumerLog('StatusConsumer'),
    });
  }
}
