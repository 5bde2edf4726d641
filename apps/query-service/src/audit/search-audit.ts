import { Topics, type TenantId } from '@kb/contracts';
import type { EventProducer } from '@kb/kafka';
import { meter } from '@kb/observability';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { EVENT_PRODUCER } from '../platform/tokens';

const dropped = meter().createCounter('kb_audit_records_dropped_total', {
  description: 'Audit records that could not be published to Kafka',
});

/**
 * Records who searched what and which documents and chunks came back, on `kb.audit.v1`
 * (acl-service stores it). Publishing does not hold up the answer; a record Kafka refuses is
 * logged and counted (kb_audit_records_dropped_total), so a gap is visible.
 */
@Injectable()
export class SearchAudit {
  private readonly logger = new Logger(SearchAudit.name);

  constructor(@Inject(EVENT_PRODUCER) private readonly producer: EventProducer | null) {}

  record(
    tenantId: TenantId,
    actor: string,
    action: 'search' | 'retrieve_context',
    query: string,
    chunks: Array<{ documentId: string; documentVersion: number; chunkIndex: number }>,
  ): void {
    if (!this.producer) return;
    void this.producer
      .publish({
        topic: Topics.audit,
        tenantId,
        key: actor,
        payload: {
          actor,
          action,
          detail: query.slice(0, 4000),
          documentIds: [...new Set(chunks.map((c) => c.documentId))],
          chunks: chunks.map((c) => `${c.documentId}#${c.documentVersion}#${c.chunkIndex}`),
          at: new Date().toISOString(),
        },
      })
      .catch((error: unknown) => {
        dropped.add(1);
        this.logger.warn(`audit record dropped: ${String(error)}`);
      });
  }
}
