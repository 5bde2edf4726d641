import type { TenantId } from '@kb/contracts';
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
import { DocumentMembershipService } from '../documents/document-membership.service';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner, type Trx } from '../platform/transaction.runner';
import { ReconciliationRepository } from './reconciliation.repository';

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
    private readonly transactions: TransactionRunner,
    private readonly repository: ReconciliationRepository,
    private readonly membership: DocumentMembershipService,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DOCUMENT_CONFIG)
    private readonly config: Pick<
      DocumentConfig,
      | 'RECONCILE_INTERVAL_MS'
      | 'RECONCILE_FULL_INTERVAL_MS'
      | 'STALLED_AFTER_MS'
      | 'RECONCILE_MAX_REDRIVES'
    >,
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
    const report = await this.transactions.run(async (trx) => {
      const stalled = await this.repository.claimStalled(trx, stalledBefore, 100);
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
      for (const tenantId of await this.driftedTenants(trx, now)) {
        result.membershipRepaired.push(
          ...(await this.membership.applyTagRules(trx, tenantId, now)),
        );
      }
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

  /**
   * The tenants whose memberships drifted, looked for by one replica per half interval among the
   * documents changed since its last look (less an interval; those of tenants whose rules changed
   * too), and among every document on the first look and every `RECONCILE_FULL_INTERVAL_MS`: at
   * 86,317 documents a look at every one took 0.9 s of Postgres (docs/performance.md).
   */
  private async driftedTenants(trx: Trx, now: Date): Promise<TenantId[]> {
    const look = await this.repository.claimChangesPass(
      trx,
      'membership',
      now,
      this.config.RECONCILE_INTERVAL_MS,
      this.config.RECONCILE_FULL_INTERVAL_MS,
    );
    return look ? this.repository.tenantsWithDriftedMemberships(trx, look.changedSince) : [];
  }

  /** The version's `uploaded` event goes out again; every stage is idempotent. */
  private async redrive(trx: Trx, document: DocumentRecord, now: Date): Promise<void> {
    await this.membership.sendThroughPipelines(trx, document);
    await this.repository.markRedriven(trx, document, now);
  }

  private async fail(trx: Trx, document: DocumentRecord, now: Date): Promise<void> {
    const minutes = Math.round(this.config.STALLED_AFTER_MS / 60_000);
    await this.repository.failStalled(
      trx,
      document,
      `no progress past "${document.status}" for ${minutes} min after ${document.redrives} re-drives`,
      now,
    );
  }
}
