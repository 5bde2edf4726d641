import type { SyncCounts, TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import type { Kysely, Selectable } from 'kysely';

import type { DocumentDatabase, SourcesTable, SourceSyncsTable } from '../platform/db.types';
import { DB } from '../platform/tokens';
import { sqlOf, type Trx } from '../platform/transaction.runner';
import {
  type CreateSource,
  externalIdPrefixOf,
  type SourceView,
  type SyncTrigger,
  type SyncView,
} from './source.model';

/** A source whose schedule is due, as the scheduler claimed it. */
export interface DueSource {
  tenantId: TenantId;
  source: SourceView;
  /** The end of the claim's lease: `next_sync_at` until `scheduleNext` moves it. */
  leasedUntil: Date;
}

/** The only SQL on `sources` and `source_syncs`; every method takes the tenant. */
@Injectable()
export class SourcesRepository {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {}

  async insert(
    tenantId: TenantId,
    source: CreateSource & { id: string; createdBy: string; now: Date; nextSyncAt: Date | null },
  ): Promise<SourceView> {
    const row = await this.db
      .insertInto('sources')
      .values({
        id: source.id,
        tenant_id: tenantId,
        name: source.name,
        kind: source.kind,
        knowledge_base_id: source.knowledgeBaseId,
        bucket: source.bucket ?? null,
        prefix: source.prefix,
        include: source.include,
        exclude: source.exclude,
        created_by: source.createdBy,
        created_at: source.now,
        schedule: source.schedule ?? null,
        schedule_timezone: source.schedule ? (source.timezone ?? null) : null,
        next_sync_at: source.nextSyncAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toSource(row);
  }

  async find(tenantId: TenantId, id: string): Promise<SourceView | undefined> {
    const row = await this.db
      .selectFrom('sources')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toSource(row) : undefined;
  }

  async list(tenantId: TenantId): Promise<SourceView[]> {
    const rows = await this.db
      .selectFrom('sources')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toSource);
  }

  /** The source and its sync history go; its documents stay (ADR 26). */
  async delete(tenantId: TenantId, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('sources')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /**
   * Claims up to `limit` sources whose schedule is due at `now`, across tenants, for `leaseMs`:
   * each one's `next_sync_at` moves to the lease's end in the same statement, so another replica
   * skips it (`FOR UPDATE SKIP LOCKED`), and if this one dies before `scheduleNext` it is due again
   * when the lease ends (docs/adr/0043, docs/adr/0049).
   */
  async claimDue(now: Date, limit: number, leaseMs: number): Promise<DueSource[]> {
    const leasedUntil = new Date(now.getTime() + leaseMs);
    const rows = await this.db
      .updateTable('sources')
      .set({ next_sync_at: leasedUntil })
      .where(({ eb, refTuple, selectFrom }) =>
        eb(
          refTuple('tenant_id', 'id'),
          'in',
          // Over the partial index sources_due.
          selectFrom('sources')
            .select(['tenant_id', 'id'])
            .where('next_sync_at', '<=', now)
            .orderBy('next_sync_at')
            .limit(limit)
            .forUpdate()
            .skipLocked()
            .$asTuple('tenant_id', 'id'),
        ),
      )
      .returningAll()
      .execute();
    return rows.map((row) => ({
      tenantId: row.tenant_id as TenantId,
      source: toSource(row),
      leasedUntil,
    }));
  }

  /**
   * Moves a claimed source to its next due time (null: none), unless its schedule changed while
   * it was claimed (its `next_sync_at` is no longer the lease's end). Answers whether it moved.
   */
  async scheduleNext(due: DueSource, next: Date | null): Promise<boolean> {
    const result = await this.db
      .updateTable('sources')
      .set({ next_sync_at: next })
      .where('tenant_id', '=', due.tenantId)
      .where('id', '=', due.source.id)
      .where('next_sync_at', '=', due.leasedUntil)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Records a running sync of the source, or answers the one already running (and records
   * nothing). A running sync whose heartbeat is older than `staleBefore` was abandoned by a process
   * that died: it is closed as failed (`sync_abandoned`) and replaced.
   */
  async startSync(
    tenantId: TenantId,
    sourceId: string,
    id: string,
    now: Date,
    staleBefore: Date,
    trigger: SyncTrigger = 'manual',
  ): Promise<{ started: SyncView } | { running: SyncView }> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('source_syncs')
        .set({
          status: 'failed',
          finished_at: now,
          failures: JSON.stringify([{ path: '/', reason: 'sync_abandoned' }]),
        })
        .where('tenant_id', '=', tenantId)
        .where('source_id', '=', sourceId)
        .where('status', '=', 'running')
        .where('heartbeat_at', '<', staleBefore)
        .execute();
      const row = await trx
        .insertInto('source_syncs')
        .values({
          id,
          tenant_id: tenantId,
          source_id: sourceId,
          status: 'running',
          trigger,
          started_at: now,
          heartbeat_at: now,
        })
        .onConflict((oc) => oc.column('source_id').where('status', '=', 'running').doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row) return { started: toSync(row) };
      const running = await trx
        .selectFrom('source_syncs')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('source_id', '=', sourceId)
        .where('status', '=', 'running')
        .executeTakeFirstOrThrow();
      return { running: toSync(running) };
    });
  }

  /** The running sync is still at work (see `startSync`). */
  async heartbeat(tenantId: TenantId, id: string, now: Date): Promise<void> {
    await this.db
      .updateTable('source_syncs')
      .set({ heartbeat_at: now })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('status', '=', 'running')
      .execute();
  }

  async findSync(tenantId: TenantId, sourceId: string, id: string): Promise<SyncView | undefined> {
    const row = await this.db
      .selectFrom('source_syncs')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('source_id', '=', sourceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toSync(row) : undefined;
  }

  async finishSync(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    outcome: {
      status: 'succeeded' | 'failed';
      counts: SyncCounts;
      failures: SyncView['failures'];
      now: Date;
    },
  ): Promise<SyncView> {
    const row = await sqlOf(trx)
      .updateTable('source_syncs')
      .set({
        status: outcome.status,
        ...outcome.counts,
        failures: JSON.stringify(outcome.failures),
        finished_at: outcome.now,
      })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toSync(row);
  }

  /** Newest first. */
  async syncs(tenantId: TenantId, sourceId: string, limit: number): Promise<SyncView[]> {
    const rows = await this.db
      .selectFrom('source_syncs')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('source_id', '=', sourceId)
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toSync);
  }
}

function toSource(row: Selectable<SourcesTable>): SourceView {
  return {
    id: row.id,
    name: row.name,
    knowledgeBaseId: row.knowledge_base_id,
    kind: row.kind as SourceView['kind'],
    bucket: row.bucket,
    prefix: row.prefix,
    include: row.include,
    exclude: row.exclude,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
    schedule: row.schedule,
    timezone: row.schedule ? (row.schedule_timezone ?? 'UTC') : null,
    nextSyncAt: row.next_sync_at ? new Date(row.next_sync_at).toISOString() : null,
    externalIdPrefix: externalIdPrefixOf(row.id),
  };
}

function toSync(row: Selectable<SourceSyncsTable>): SyncView {
  return {
    id: row.id,
    sourceId: row.source_id,
    status: row.status as SyncView['status'],
    trigger: row.trigger as SyncTrigger,
    counts: {
      added: row.added,
      updated: row.updated,
      unchanged: row.unchanged,
      deleted: row.deleted,
      failed: row.failed,
    },
    failures: row.failures,
    startedAt: new Date(row.started_at).toISOString(),
    finishedAt: row.finished_at ? new Date(row.finished_at).toISOString() : null,
  };
}
