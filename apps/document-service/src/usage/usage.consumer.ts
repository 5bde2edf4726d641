import { type TopicEnvelope, Topics } from '@kb/contracts';
import { consumerLog, EventConsumer } from '@kb/kafka';
import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { KAFKA } from '../platform/tokens';
import type { ActivityRow } from './usage.repository';
import { UsageRepository } from './usage.repository';

type AuditEnvelope = TopicEnvelope<typeof Topics.audit>;

const COUNTED = new Set(['search', 'retrieve_context', 'document_uploaded']);

/**
 * Counts a tenant's activity by UTC day from the audit topic (docs/adr/0053): searches and
 * context calls (query-service records every one, with the knowledge bases it searched and
 * whether it reranked) and uploads (document-service records those). A fetched batch is one
 * upsert. Counting is at least once: a batch redelivered after a crash counts again.
 */
@Injectable()
export class UsageConsumer {
  readonly consumer: EventConsumer;

  constructor(
    @Inject(KAFKA) kafka: Kafka,
    @Inject(DOCUMENT_CONFIG) config: Pick<DocumentConfig, 'KAFKA_GROUP_ID'>,
    usage: UsageRepository,
  ) {
    this.consumer = new EventConsumer(kafka, {
      groupId: `${config.KAFKA_GROUP_ID}-usage`,
      handlers: { [Topics.audit]: (event) => usage.addActivity(activityOf([event])) },
      batchHandlers: { [Topics.audit]: (events) => usage.addActivity(activityOf(events)) },
      log: consumerLog('UsageConsumer'),
      fetch: { minBytes: 16 * 1024, maxWaitMs: 500 },
    });
  }
}

/**
 * One row per tenant and day ('' knowledge base), and one per knowledge base an event names: the
 * tenant's row counts each event once, however many knowledge bases it spanned.
 */
export function activityOf(events: AuditEnvelope[]): ActivityRow[] {
  const rows = new Map<string, ActivityRow>();
  const add = (tenantId: string, knowledgeBaseId: string, day: string, event: AuditEnvelope) => {
    const key = `${tenantId}\u0000${knowledgeBaseId}\u0000${day}`;
    const row = rows.get(key) ?? {
      tenantId,
      knowledgeBaseId,
      day,
      searches: 0,
      contextCalls: 0,
      reranks: 0,
      uploads: 0,
    };
    const { action, reranked } = event.payload;
    if (action === 'search') row.searches += 1;
    if (action === 'retrieve_context') row.contextCalls += 1;
    if (action === 'document_uploaded') row.uploads += 1;
    if (reranked) row.reranks += 1;
    rows.set(key, row);
  };
  for (const event of events) {
    if (!COUNTED.has(event.payload.action)) continue;
    const day = event.payload.at.slice(0, 10);
    add(event.tenantId, '', day, event);
    for (const kb of new Set(event.payload.knowledgeBaseIds ?? []))
      add(event.tenantId, kb, day, event);
  }
  return [...rows.values()];
}
