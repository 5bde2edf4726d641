import type { DocumentFilterNode, TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';

import { documentFilterSql } from '../documents/document-filter.sql';
import type { DeletedDocument } from '../documents/documents.repository';
import { anyHoldSql } from '../holds/held-documents.sql';
import type { ActiveHold } from '../holds/legal-hold.model';
import type { Erasures } from '../platform/db.generated';
import type { DocumentDatabase } from '../platform/db.types';
import { DB } from '../platform/tokens';
import { sqlOf, type Trx } from '../platform/transaction.runner';
import { deleteClaimed } from '../retention/claimed-delete.sql';
import type { ErasureRecord, ErasureStatus } from './erasure.model';

/** What an erasure deletes: the documents of an owner, those matching a filter, or both. */
export interface ErasureSubject {
  ownerId: string | null;
  filter: DocumentFilterNode | undefined;
}

const subjectSql = (subject: ErasureSubject): RawBuilder<boolean> =>
  sql<boolean>`(${subject.ownerId === null ? sql`TRUE` : sql`owner_id = ${subject.ownerId}`} AND ${documentFilterSql(subject.filter)})`;

/** `erasures` and the erasure's statements over `documents` (docs/adr/0052). */
@Injectable()
export class ErasuresRepository {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {}

  async insert(trx: Trx, job: ErasureRecord): Promise<void> {
    await sqlOf(trx)
      .insertInto('erasures')
      .values({
        tenant_id: job.tenantId,
        id: job.id,
        requested_by: job.requestedBy,
        owner_id: job.ownerId,
        where_filter: job.where,
        status: job.status,
        started_at: job.startedAt,
        updated_at: job.updatedAt,
      })
      .execute();
  }

  async find(tenantId: TenantId, id: string): Promise<ErasureRecord | undefined> {
    const row = await this.db
      .selectFrom('erasures')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toErasure(row) : undefined;
  }

  /**
   * Up to `limit` running erasures no replica holds, across tenants, oldest first, each leased to
   * the caller for `leaseMs` (a lease queue, docs/adr/0049): a job whose replica stopped or died
   * is due again when its lease ends.
   */
  async claimRunning(now: Date, limit: number, leaseMs: number): Promise<ErasureRecord[]> {
    const rows = await this.db
      .updateTable('erasures')
      .set({ leased_until: new Date(now.getTime() + leaseMs) })
      .where(({ eb, refTuple, selectFrom }) =>
        eb(
          refTuple('tenant_id', 'id'),
          'in',
          // Over the partial index erasures_running.
          selectFrom('erasures')
            .select(['tenant_id', 'id'])
            .where('status', '=', 'running')
            .where((w) => w.or([w('leased_until', 'is', null), w('leased_until', '<=', now)]))
            .orderBy('started_at')
            .limit(limit)
            .forUpdate()
            .skipLocked()
            .$asTuple('tenant_id', 'id'),
        ),
      )
      .returningAll()
      .execute();
    return rows.map(toErasure);
  }

  /** Adds a batch's deletions to the job's progress, and keeps its lease for `leasedUntil`. */
  async progress(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    deleted: number,
    at: Date,
    leasedUntil: Date,
  ) {
    await sqlOf(trx)
      .updateTable('erasures')
      .set({ deleted: sql`deleted + ${deleted}`, updated_at: at, leased_until: leasedUntil })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .execute();
  }

  async finish(
    tenantId: TenantId,
    id: string,
    end: { status: ErasureStatus; held: number; error: string | null; at: Date },
  ): Promise<void> {
    await this.db
      .updateTable('erasures')
      .set({
        status: end.status,
        held: end.held,
        error: end.error,
        updated_at: end.at,
        finished_at: end.at,
        leased_until: null,
      })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .execute();
  }

  deleteBatch(
    trx: Trx,
    tenantId: TenantId,
    subject: ErasureSubject,
    holds: ActiveHold[],
    limit: number,
  ): Promise<DeletedDocument[]> {
    return deleteClaimed(trx, tenantId, subjectSql(subject), holds, limit);
  }

  /** The documents of the subject that a hold keeps. */
  async countHeld(
    trx: Trx,
    tenantId: TenantId,
    subject: ErasureSubject,
    holds: ActiveHold[],
  ): Promise<number> {
    const row = await sqlOf(trx)
      .selectFrom('documents')
      .select(sql<string>`count(*)`.as('n'))
      .where('tenant_id', '=', tenantId)
      .where(subjectSql(subject))
      .where(anyHoldSql(holds))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

const toErasure = (row: Selectable<Erasures>): ErasureRecord => ({
  id: row.id,
  tenantId: row.tenant_id,
  requestedBy: row.requested_by,
  ownerId: row.owner_id,
  where: row.where_filter,
  status: row.status as ErasureStatus,
  deleted: row.deleted,
  held: row.held,
  error: row.error,
  startedAt: row.started_at,
  updatedAt: row.updated_at,
  finishedAt: row.finished_at,
});
