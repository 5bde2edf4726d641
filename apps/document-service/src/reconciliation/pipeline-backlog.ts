import { DOCUMENT_STATUSES, type DocumentStatus } from '@kb/contracts';
import { meter } from '@kb/observability';
import { PeriodicTask } from '@kb/timing';
import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

import { FINAL_STATUSES, isFinal } from '../documents/document.model';
import { sqlOf, TransactionRunner } from '../platform/transaction.runner';

/** How often the backlog is counted: one grouped query over the unfinished documents. */
export const BACKLOG_INTERVAL_MS = 15_000;

/** The pipeline's stages: every status a document passes through before `indexed` or `failed`. */
export const PIPELINE_STAGES = DOCUMENT_STATUSES.filter((status) => !isFinal(status));

/**
 * `kb_documents_in_stage{stage}` (docs/adr/0041): how many documents of every tenant wait in each
 * pipeline stage (`pending`, `parsing`, `embedding`, `indexing`), counted every 15 s. With
 * `kb_consumer_lag` it tells a backlog (work waiting) from a stall (the reconciler's repairs).
 */
@Injectable()
export class PipelineBacklog implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(PipelineBacklog.name);
  private readonly task = new PeriodicTask(
    'pipeline backlog',
    BACKLOG_INTERVAL_MS,
    () => this.count(),
    this.logger,
  );
  private readonly counts = new Map<DocumentStatus, number>();

  constructor(private readonly transactions: TransactionRunner) {
    meter()
      .createObservableGauge('kb_documents_in_stage', {
        description: 'Documents of every tenant in each pipeline stage, counted every 15 s',
      })
      .addCallback((result) => {
        for (const [stage, count] of this.counts) result.observe(count, { stage });
      });
  }

  onApplicationBootstrap(): void {
    this.task.start();
    void this.count().catch((error: unknown) =>
      this.logger.warn(`pipeline backlog not counted: ${String(error)}`),
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** Counts the unfinished documents by status; a stage with none reports 0. */
  async count(): Promise<ReadonlyMap<DocumentStatus, number>> {
    const rows = await this.transactions.statement((trx) =>
      sqlOf(trx)
        .selectFrom('documents')
        .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
        .where('status', 'not in', FINAL_STATUSES)
        .groupBy('status')
        .execute(),
    );
    for (const stage of PIPELINE_STAGES) this.counts.set(stage, 0);
    for (const row of rows) this.counts.set(row.status, Number(row.count));
    return this.counts;
  }
}
