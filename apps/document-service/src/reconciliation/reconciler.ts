import { Topics, newEnvelope, topicEventTypes } from '@kb/contracts';
import { PeriodicTask } from '@kb/http';
import { meter } from '@kb/observability';
import type { BlobStore } from '@kb/storage';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import { DocumentsRepository, uploadedEventOf } from '../documents/documents.repository';
import { OutboxRelay } from '../outbox/outbox.relay';
import type { DocumentDatabase, DocumentsTable } from '../platform/db.types';
import { BLOB_STORE, CLOCK, DB, type Clock } from '../platform/tokens';

const repairs = meter().createCounter('kb_reconciliation_repairs_total', {
  description: 'Documents reconciliation repaired, by action (redriven, failed or membership)',
});

export interface ReconcileReport {
  redriven: string[];
  failed: string[];
  /** Documents whose knowledge bases no longer matched their tags and the tag rules. */
  membershipRepaired: string[];
}

/**
 * Finds document versions that made no progress for `STALLED_AFTER_MS` (a message lost to a
 * crash between stages, a dead-lettered transient error, a service down for long) and repairs
 * them: the version's `uploaded` event goes through the pipeline again — every stage is
 * idempotent, so work already done is redone harmlessly — up to `RECONCILE_MAX_REDRIVES` times;
 * then the document ends `failed` with reason `stalled`, never silently pending forever.
 * Replicas share the work: each run claims rows with SKIP LOCKED.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(Reconciler.name);
  private readonly task: PeriodicTask;

  constructor(
    @Inject(DB) private readonly db: Kysely<DocumentDatabase>,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DOCUMENT_CONFIG) private readonly config: DocumentConfig,
    private readonly outbox: OutboxRelay,
    private readonly documents: DocumentsRepository,
  ) {
    this.task = new PeriodicTask(
      'reconciliation',
      config.RECONCILE_INTERVAL_MS,
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

  /** One pass over every tenant's stalled documents. */
  async reconcile(): Promise<ReconcileReport> {
    const now = this.clock();
    const stalledBefore = new Date(now.getTime() - this.config.STALLED_AFTER_MS);
    const report = await this.db.transaction().execute(async (trx) => {
      const stalled = await trx
        .selectFrom('documents')
        .selectAll()
        .where('status', 'not in', ['indexed', 'failed'])
        .where('updated_at', '<', stalledBefore)
        .orderBy('updated_at')
        .limit(100)
        .forUpdate()
        .skipLocked()
        .execute();
      const result: ReconcileReport = { redriven: [], failed: [], membershipRepaired: [] };
      for (const row of stalled) {
        if (row.redrives < this.config.RECONCILE_MAX_REDRIVES) {
          await this.redrive(trx, row, now);
          result.redriven.push(row.id);
        } else {
          await this.fail(trx, row, now);
          result.failed.push(row.id);
        }
      }
      // A rule or tag change that raced another can leave membership behind; it is repaired here.
      result.membershipRepaired = await this.documents.applyTagRules(now, { trx });
      return result;
    });
    if (report.redriven.length + report.membershipRepaired.length > 0) this.outbox.wake();
    repairs.add(report.redriven.length, { action: 'redriven' });
    repairs.add(report.failed.length, { action: 'failed' });
    repairs.add(report.membershipRepaired.length, { action: 'membership' });
    if (report.redriven.length + report.failed.length + report.membershipRepaired.length > 0) {
      this.logger.warn(
        `reconciliation: ${report.redriven.length} stalled documents sent through the pipeline again, ${report.failed.length} failed, ${report.membershipRepaired.length} memberships repaired`,
      );
    }
    return report;
  }

  private async redrive(
    trx: Transaction<DocumentDatabase>,
    row: Selectable<DocumentsTable>,
    now: Date,
  ): Promise<void> {
    const envelope = newEnvelope(
      topicEventTypes[Topics.document],
      row.tenant_id,
      uploadedEventOf(row, this.blobs.bucket, await this.documents.pipelinesOf(trx, row)),
    );
    await trx
      .insertInto('outbox')
      .values({
        topic: Topics.document,
        message_key: row.id,
        payload: JSON.stringify(envelope),
        headers: JSON.stringify({}),
      })
      .execute();
    await trx
      .updateTable('documents')
      .set({
        redrives: sql<number>`redrives + 1`,
        stage_times: sql<string>`stage_times || jsonb_build_object(${`redriven_${row.redrives + 1}`}::text, ${now.toISOString()}::text)`,
        updated_at: now,
      })
      .where('tenant_id', '=', row.tenant_id)
      .where('id', '=', row.id)
      .execute();
  }

  private async fail(
    trx: Transaction<DocumentDatabase>,
    row: Selectable<DocumentsTable>,
    now: Date,
  ): Promise<void> {
    const minutes = Math.round(this.config.STALLED_AFTER_MS / 60_000);
    await trx
      .updateTable('documents')
      .set({
        status: 'failed',
        failure_reason: 'stalled',
        failure_detail: `no progress past "${row.status}" for ${minutes} min after ${row.redrives} re-drives`,
        stage_times: sql<string>`stage_times || jsonb_build_object('failed', ${now.toISOString()}::text)`,
        updated_at: now,
      })
      .where('tenant_id', '=', row.tenant_id)
      .where('id', '=', row.id)
      .execute();
  }
}
