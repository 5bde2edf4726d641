import { type TenantId, Topics } from '@kb/contracts';
import { meter } from '@kb/observability';
import { PeriodicTask } from '@kb/timing';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import type { DocumentRecord } from '../documents/document.model';
import { accessSnapshotOf } from '../documents/document-events.builder';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { OutboxWriter } from '../outbox/outbox.writer';
import { CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import { ReconciliationRepository } from './reconciliation.repository';

const snapshotsSent = meter().createCounter('kb_access_snapshot_documents_total', {
  description:
    'Documents whose readers access reconciliation sent to indexing for comparison, by pass (full or changes)',
});

/** Documents read (and snapshot events written) per transaction. */
export const ACCESS_PAGE = 500;
/**
 * Principal characters per snapshot event at most (an ACL may name hundreds of principals): it
 * stays well under Kafka's 1 MB message limit.
 */
export const SNAPSHOT_CHARS = 200_000;

type AccessRow = Pick<DocumentRecord, 'id' | 'tenantId' | 'principals' | 'metaVersion'>;

/**
 * Access reconciliation (docs/adr/0018): every `ACCESS_RECONCILE_INTERVAL_MS` one replica sends
 * what this service holds of documents' readers (principals and meta version) to indexing as
 * `access_snapshot` events, one per tenant and page. indexing-service compares each entry with
 * what both indexes were last given and repairs any difference, so an ACL change that failed to
 * reach them (a store down, a dead-lettered event, a reordered one) converges within an interval.
 *
 * A pass sends the documents changed since the pass before it started, less one interval (a
 * change committed late, or stamped by a replica whose clock lags, is sent twice rather than
 * never); every `RECONCILE_FULL_INTERVAL_MS`, and on the first pass ever, it sends every
 * document. At a million documents a full pass is about a hundred megabytes of events, parsed by
 * every consumer of `kb.document.v1` (docs/performance.md, "The access reconciliation at scale").
 */
@Injectable()
export class AccessReconciler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(AccessReconciler.name);
  private readonly task: PeriodicTask;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly repository: ReconciliationRepository,
    private readonly events: OutboxWriter,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DOCUMENT_CONFIG)
    private readonly config: Pick<
      DocumentConfig,
      'ACCESS_RECONCILE_INTERVAL_MS' | 'RECONCILE_FULL_INTERVAL_MS'
    >,
  ) {
    this.task = new PeriodicTask(
      'access reconciliation',
      config.ACCESS_RECONCILE_INTERVAL_MS,
      () => this.reconcile(),
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.task.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /**
   * One pass over every tenant's documents, or those changed since the last pass, unless another
   * replica started one less than half an interval ago. Returns how many documents were sent, or
   * undefined when the pass was not ours.
   */
  async reconcile(): Promise<number | undefined> {
    const pass = await this.transactions.run((trx) =>
      this.repository.claimChangesPass(
        trx,
        'access',
        this.clock(),
        this.config.ACCESS_RECONCILE_INTERVAL_MS,
        this.config.RECONCILE_FULL_INTERVAL_MS,
      ),
    );
    if (!pass) return undefined;
    let sent = 0;
    let after: string | undefined;
    for (;;) {
      const page = await this.transactions.run(async (trx) => {
        const rows = await this.repository.accessPage(trx, after, ACCESS_PAGE, pass.changedSince);
        for (const [tenantId, documents] of byTenant(rows)) {
          for (const part of bySize(documents)) {
            await this.events.enqueue(
              trx,
              Topics.document,
              tenantId,
              tenantId,
              accessSnapshotOf(part),
            );
          }
        }
        return rows;
      });
      if (page.length > 0) this.outbox.wake();
      sent += page.length;
      if (page.length < ACCESS_PAGE) break;
      after = page[page.length - 1]!.id;
    }
    snapshotsSent.add(sent, { pass: pass.changedSince ? 'changes' : 'full' });
    this.logger.log(
      pass.changedSince
        ? `access reconciliation: readers of ${sent} documents changed since ${pass.changedSince.toISOString()} sent to indexing`
        : `access reconciliation: readers of all ${sent} documents sent to indexing`,
    );
    return sent;
  }
}

function byTenant(rows: AccessRow[]): Map<TenantId, AccessRow[]> {
  const groups = new Map<TenantId, AccessRow[]>();
  for (const row of rows) {
    const group = groups.get(row.tenantId) ?? [];
    group.push(row);
    groups.set(row.tenantId, group);
  }
  return groups;
}

/** Consecutive parts of `rows` whose principals add up to at most `SNAPSHOT_CHARS` each. */
export function bySize(rows: AccessRow[], limit = SNAPSHOT_CHARS): AccessRow[][] {
  const parts: AccessRow[][] = [];
  let part: AccessRow[] = [];
  let size = 0;
  for (const row of rows) {
    const rowSize = row.id.length + row.principals.reduce((n, p) => n + p.length + 3, 16);
    if (part.length > 0 && size + rowSize > limit) {
      parts.push(part);
      part = [];
      size = 0;
    }
    part.push(row);
    size += rowSize;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}
