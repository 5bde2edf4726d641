import { type DocumentEvent, Topics } from '@kb/contracts';
import { consumerLog, EventConsumer, instanceGroup } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { QUERY_CONFIG, type QueryConfig } from '../config/query.config';
import { KAFKA } from '../platform/tokens';
import { DocumentDetailsCache } from './document-details.cache';

/**
 * `kb.document.v1` and `kb.document.status.v1` → drop the named documents' hit details;
 * `kb.acl.v1` → the tenant's (docs/adr/0045). A group per instance: every replica holds its own
 * cache, and serves from it only while this consumer is in its group.
 */
@Injectable()
export class DocumentDetailsConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(QUERY_CONFIG) config: QueryConfig,
    cache: DocumentDetailsCache,
  ) {
    this.consumer = new EventConsumer(kafka, {
      ...instanceGroup(`${config.KAFKA_GROUP_ID}-details`),
      handlers: {
        [Topics.document]: async (event) =>
          cache.forget(event.tenantId, documentIdsOf(event.payload)),
        [Topics.documentStatus]: async (event) =>
          cache.forget(event.tenantId, [event.payload.documentId]),
        [Topics.acl]: async (event) => cache.forget(event.tenantId),
      },
      fromBeginning: false,
      log: consumerLog(DocumentDetailsConsumer.name),
    });
    cache.bindLiveness(() => this.consumer.isJoined);
  }
}

/** The documents an event of `kb.document.v1` is about. */
export function documentIdsOf(event: DocumentEvent): string[] {
  switch (event.kind) {
    case 'uploaded':
    case 'deleted':
    case 'acl_changed':
    case 'attributes_changed':
      return [event.documentId];
    case 'documents_removed':
      return event.documentIds;
    case 'access_snapshot':
      return event.documents.map((d) => d.documentId);
  }
}
