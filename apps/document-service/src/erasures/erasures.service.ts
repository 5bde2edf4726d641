import { randomUUID } from 'node:crypto';

import type { Access } from '@kb/auth';
import {
  type DocumentFilterNode,
  FilterError,
  parseDocumentFilter,
  type TenantId,
  toTenantId,
} from '@kb/contracts';
import { QueueWorker } from '@kb/jobs';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';

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
/** A running job is its replica's this long after its last batch; then another takes it up. */
const LEASE_MS = 60_000;
/** How often each replica looks for running jobs nobody holds (a request wakes it at once). */
const POLL_MS = 5_000;

/**
 * Erasure (docs/adr/0052): a tenant admin deletes everything a user uploaded, or everything a
 * listing filter matches, as one audited job. The request is recorded (`erasures`, and
 * `erasure_requested` on `kb.audit.v1`) in one transaction; the job then deletes in batches of
 * 200 through the bulk delete path (each document's `deleted` event and an audit record naming
 * the job, in the batch's transaction), skipping what legal holds cover, and counts those when it
 * ends. `GET /v1/erasures/{id}` reads its progress. Running jobs are a lease queue drained by a
 * `QueueWorker` (docs/adr/0049): a job is held by one replica while its batches renew the lease,
 * and one whose replica stopped or crashed is taken up by another where it left off.
 */
@Injectable()
export class ErasuresService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ErasuresService.name);
  private readonly worker: QueueWorker<ErasureRecord>;

  constructor(
    private readonly erasures: ErasuresRepository,
    private readonly holds: HeldDocuments,
    private readonly transactions: TransactionRunner,
    private readonly deletion: BulkDeletion,
    private readonly audit: DocumentAudit,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.worker = new QueueWorker(
      { claim: (limit, leaseMs) => erasures.claimRunning(this.clock(), limit, leaseMs) },
      (job) => this.run(job),
      { name: 'erasures', concurrency: 2, leaseMs: LEASE_MS, pollMs: POLL_MS },
      this.logger,
    );
  }

  onApplicationBootstrap(): void {
    this.worker.start();
  }

  /** Stops between batches; a job left running is taken up again when its lease ends. */
  beforeApplicationShutdown(): Promise<void> {
    return this.worker.stop();
  }

  async request(tenantId: TenantId, access: Access, input: RequestErasure): Promise<ErasureView> {
    requireAdmin(access);
    // Refused before anything is recorded when the filter does not parse.
    if (input.where) parseFilter(input.where);
    const now = this.clock();
    const job: ErasureRecord = {
      id: randomUUID(),
      tenantId,
      requestedBy: access.userId,
      ownerId: input.uploadedBy ?? null,
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
    // Started here at once; the worker's poll is for jobs another replica left.
    void this.worker.drain();
    return toErasureView(job);
  }

  async get(tenantId: TenantId, access: Access, id: string): Promise<ErasureView> {
    requireAdmin(access);
    const job = await this.erasures.find(tenantId, id);
    if (!job) throw new ErasureError(ErasureErrorCode.NotFound, `erasure ${id} not found`);
    return toErasureView(job);
  }

  /**
   * The job, from where it stands: batches until none is left, then the held count. Stops
   * between batches at shutdown, leaving it running for another replica. Never throws.
   */
  async run(job: ErasureRecord): Promise<void> {
    const { id } = job;
    const tenantId = toTenantId(job.tenantId);
    const subject: ErasureSubject = {
      ownerId: job.ownerId,
      filter: job.where ? parseFilter(JSON.parse(job.where)) : undefined,
    };
    const actor = `erasure:${id}`;
    try {
      for (;;) {
        if (this.worker.stopping) return;
        const batch = await this.transactions.run(async (trx) => {
          const holds = await this.holds.activeHolds(trx, tenantId);
          const rows = await this.erasures.deleteBatch(
            trx,
            tenantId,
            subject,
            holds,
            ERASURE_BATCH,
          );
          const attached = await this.deletion.record(trx, tenantId, actor, rows, {
            cause: 'erasure',
            erasureId: id,
          });
          const now = this.clock();
          const leasedUntil = new Date(now.getTime() + LEASE_MS);
          const count = rows.length + attached.length;
          await this.erasures.progress(trx, tenantId, id, count, now, leasedUntil);
          return { rows, attached };
        });
        await this.deletion.after(tenantId, [...batch.rows, ...batch.attached]);
        if (batch.rows.length < ERASURE_BATCH) break;
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

  /** Resolves when every job this replica has started has ended (tests). */
  idle(): Promise<void> {
    return this.worker.idle();
  }

  /** Takes up every running job no replica holds, and waits for them (tests). */
  resume(): Promise<number> {
    return this.worker.drain();
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
