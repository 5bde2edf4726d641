import { randomUUID } from 'node:crypto';

import type { Access } from '@kb/auth';
import {
  type DocumentFilterNode,
  FilterError,
  parseDocumentFilter,
  type TenantId,
} from '@kb/contracts';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';

import { DocumentAudit } from '../documents/document-audit';
import { HeldDocuments } from '../holds/legal-holds.repository';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import { BulkDeletion } from '../retention/bulk-deletion';
import {
  type ErasureRecord,
  type ErasureView,
  type RequestErasure,
  toErasureView,
} from './erasure.model';
import { ErasureError, ErasureErrorCode } from './erasures.errors';
import { ErasuresRepository, type ErasureSubject } from './erasures.repository';

/** Documents one batch deletes in one transaction. */
export const ERASURE_BATCH = 200;

/**
 * Erasure (docs/adr/0052): a tenant admin deletes everything a user uploaded, or everything a
 * listing filter matches, as one audited job. The request is recorded (`erasures`, and
 * `erasure_requested` on `kb.audit.v1`) in one transaction; the job then deletes in batches of
 * 200 through the bulk delete path (each document's `deleted` event and an audit record naming
 * the job, in the batch's transaction), skipping what legal holds cover, and counts those when it
 * ends. It runs in the background of the replica that took the request; `GET /v1/erasures/{id}`
 * reads its progress. A job a crashed replica left `running` is not resumed (ADR 52: it moves
 * onto the job queue of issue 35); requesting the erasure again finishes it.
 */
@Injectable()
export class ErasuresService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ErasuresService.name);
  private readonly running = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    private readonly erasures: ErasuresRepository,
    private readonly holds: HeldDocuments,
    private readonly transactions: TransactionRunner,
    private readonly deletion: BulkDeletion,
    private readonly audit: DocumentAudit,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async request(tenantId: TenantId, access: Access, input: RequestErasure): Promise<ErasureView> {
    requireAdmin(access);
    const subject: ErasureSubject = {
      ownerId: input.uploadedBy ?? null,
      filter: input.where ? parseFilter(input.where) : undefined,
    };
    const now = this.clock();
    const job: ErasureRecord = {
      id: randomUUID(),
      tenantId,
      requestedBy: access.userId,
      ownerId: subject.ownerId,
      where: input.where ? JSON.stringify(input.where) : null,
      status: 'running',
      deleted: 0,
      held: 0,
      error: null,
      startedAt: now,
      updatedAt: now,
      finishedAt: null,
    };
    await this.transactions.run(async (trx) => {
      await this.erasures.insert(trx, job);
      await this.audit.record(trx, 'erasure_requested', access, [], {
        erasureId: job.id,
        ...(job.ownerId ? { uploadedBy: job.ownerId } : {}),
        ...(job.where ? { where: job.where } : {}),
      });
    });
    this.outbox.wake();
    const run = this.run(tenantId, job.id, subject).finally(() => this.running.delete(run));
    this.running.add(run);
    return toErasureView(job);
  }

  async get(tenantId: TenantId, access: Access, id: string): Promise<ErasureView> {
    requireAdmin(access);
    const job = await this.erasures.find(tenantId, id);
    if (!job) throw new ErasureError(ErasureErrorCode.NotFound, `erasure ${id} not found`);
    return toErasureView(job);
  }

  /** Waits for running jobs to finish their batch; they stop between batches. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.running]);
  }

  /** The job: batches until none is left, then the held count. Never throws. */
  async run(tenantId: TenantId, id: string, subject: ErasureSubject): Promise<void> {
    const actor = `erasure:${id}`;
    try {
      for (;;) {
        if (this.stopping) throw new Error('stopped by a shutdown before it finished');
        const batch = await this.transactions.run(async (trx) => {
          const holds = await this.holds.activeHolds(trx, tenantId);
          const rows = await this.erasures.deleteBatch(
            trx,
            tenantId,
            subject,
            holds,
            ERASURE_BATCH,
          );
          await this.deletion.record(trx, tenantId, actor, rows, {
            cause: 'erasure',
            erasureId: id,
          });
          await this.erasures.progress(trx, tenantId, id, rows.length, this.clock());
          return rows;
        });
        await this.deletion.after(tenantId, batch);
        if (batch.length < ERASURE_BATCH) break;
      }
      const held = await this.transactions.run(async (trx) =>
        this.erasures.countHeld(
          trx,
          tenantId,
          subject,
          await this.holds.activeHolds(trx, tenantId),
        ),
      );
      await this.erasures.finish(tenantId, id, {
        status: 'succeeded',
        held,
        error: null,
        at: this.clock(),
      });
      this.logger.log(`erasure ${id} finished (${held} document(s) kept by legal holds)`);
    } catch (error) {
      this.logger.warn(`erasure ${id} failed: ${String(error)}`);
      await this.erasures
        .finish(tenantId, id, {
          status: 'failed',
          held: 0,
          error: String(error).slice(0, 500),
          at: this.clock(),
        })
        .catch(() => undefined);
    }
  }

  /** Resolves when every job this replica runs has ended (tests). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}

function requireAdmin(access: Access): void {
  if (!access.isAdmin) {
    throw new ErasureError(
      ErasureErrorCode.PermissionDenied,
      'only a tenant admin may erase documents',
    );
  }
}

function parseFilter(where: unknown): DocumentFilterNode | undefined {
  try {
    return parseDocumentFilter(where);
  } catch (error) {
    if (error instanceof FilterError)
      throw new ErasureError(ErasureErrorCode.InvalidFilter, error.message);
    throw error;
  }
}
