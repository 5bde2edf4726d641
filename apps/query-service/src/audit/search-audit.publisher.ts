import { type TenantId, Topics } from '@kb/contracts';
import type { EventProducer, OutgoingEvent } from '@kb/kafka';
import { meter } from '@kb/observability';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';

import { EVENT_PRODUCER } from '../platform/tokens';

const dropped = meter().createCounter('kb_audit_records_dropped_total', {
  description: 'Audit records that could not be published to Kafka',
});

/**
 * Records wait at most this long, or until this many are queued, before one produce request.
 * 200 ms (was 25): at one search at a time, a produce request, the broker's append and
 * acl-service's fetch and INSERT each cost as much per batch as per record, so a longer window
 * cut the audit's CPU per search about fourfold (docs/adr/0029); the answer never waits for it.
 */
export const AUDIT_FLUSH_MS = 200;
export const AUDIT_BATCH = 200;

/**
 * Records who searched what and which documents and chunks came back, on `kb.audit.v1`
 * (acl-service stores it). Publishing does not hold up the answer: records are queued and sent
 * in batches (one produce request per `AUDIT_FLUSH_MS` or `AUDIT_BATCH` records, so a busy
 * replica pays one broker round trip per batch, not per search), and flushed at shutdown. A batch
 * Kafka refuses is logged and counted (kb_audit_records_dropped_total), so a gap is visible.
 */
@Injectable()
export class SearchAudit implements BeforeApplicationShutdown {
  private readonly logger = new Logger(SearchAudit.name);
  private queue: OutgoingEvent<typeof Topics.audit>[] = [];
  private timer?: NodeJS.Timeout;
  private inFlight = new Set<Promise<void>>();

  constructor(@Inject(EVENT_PRODUCER) private readonly producer: EventProducer | null) {}

  record(
    tenantId: TenantId,
    actor: string,
    action: 'search' | 'retrieve_context',
    query: string,
    chunks: Array<{ documentId: string; documentVersion: number; chunkIndex: number }>,
    /** For usage by day (docs/adr/0053): the knowledge bases searched, and a rerank applied. */
    usage: { knowledgeBaseIds?: readonly string[] | undefined; reranked?: boolean } = {},
  ): void {
    if (!this.producer) return;
    this.queue.push({
      topic: Topics.audit,
      tenantId,
      key: actor,
      payload: {
        actor,
        action,
        detail: query.slice(0, 4000),
        documentIds: [...new Set(chunks.map((c) => c.documentId))],
        chunks: chunks.map((c) => `${c.documentId}#${c.documentVersion}#${c.chunkIndex}`),
        ...(usage.knowledgeBaseIds?.length
          ? { knowledgeBaseIds: [...new Set(usage.knowledgeBaseIds)] }
          : {}),
        ...(usage.reranked ? { reranked: true } : {}),
        at: new Date().toISOString(),
      },
    });
    // flush() never rejects: a failed batch is counted and logged there.
    if (this.queue.length >= AUDIT_BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), AUDIT_FLUSH_MS);
  }

  /** Sends what is queued; resolves when every batch sent so far has been acknowledged or dropped. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    if (batch.length > 0 && this.producer) {
      const sent = this.producer
        .publishMany(batch)
        .catch((error: unknown) => {
          dropped.add(batch.length);
          this.logger.warn(`${batch.length} audit records dropped: ${String(error)}`);
        })
        .finally(() => this.inFlight.delete(sent));
      this.inFlight.add(sent);
    }
    return Promise.all(this.inFlight).then(() => undefined);
  }

  /** Before the producer disconnects (ResourceCloser runs at onApplicationShutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }
}
