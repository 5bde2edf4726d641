import { type TenantId, toTenantId } from '@kb/contracts';
import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';

import { type DocumentRecord, FINAL_STATUSES } from '../documents/document.model';
import { toRecord } from '../documents/document-row.mapper';
import { membershipDrift } from '../documents/membership-drift.sql';
import { sqlOf, type Trx } from '../platform/transaction.runner';

/** The id before every other: a resumable pass that has sent nothing yet. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Which documents a page of the access pass reads (all of them when empty). */
export interface AccessScope {
  changedSince?: Date | undefined;
  everyAfter?: string | undefined;
}

/**
 * Reconciliation's SQL. Its sweeps span tenants by design (one pass repairs every tenant, and
 * replicas share it with SKIP LOCKED); its writes take the tenant of the document they repair.
 */
@Injectable()
export class ReconciliationRepository {
  /** Unfinished versions with no change since `before`, oldest first, locked until `trx` ends. */
  async claimStalled(trx: Trx, before: Date, limit: number): Promise<DocumentRecord[]> {
    const rows = await sqlOf(trx)
      .selectFrom('documents')
      .selectAll()
      .where('status', 'not in', FINAL_STATUSES)
      .where('updated_at', '<', before)
      .orderBy('updated_at')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
    return rows.map(toRecord);
  }

  /** Counts a re-drive of the document's current version (`redriven_<n>` in its stage times). */
  async markRedriven(trx: Trx, document: DocumentRecord, now: Date): Promise<void> {
    await sqlOf(trx)
      .updateTable('documents')
      .set({
        redrives: sql<number>`redrives + 1`,
        stage_times: sql<string>`stage_times || jsonb_build_object(${`redriven_${document.redrives + 1}`}::text, ${now.toISOString()}::text)`,
        updated_at: now,
      })
      .where('tenant_id', '=', document.tenantId)
      .where('id', '=', document.id)
      .execute();
  }

  /** Ends the document `failed` with reason `stalled`. */
  async failStalled(trx: Trx, document: DocumentRecord, detail: string, now: Date): Promise<void> {
    await sqlOf(trx)
      .updateTable('documents')
      .set({
        status: 'failed',
        failure_reason: 'stalled',
        failure_detail: detail,
        stage_times: sql<string>`stage_times || jsonb_build_object('failed', ${now.toISOString()}::text)`,
        updated_at: now,
      })
      .where('tenant_id', '=', document.tenantId)
      .where('id', '=', document.id)
      .execute();
  }

  /**
   * Claims the periodic pass `name` for this replica: true when no replica started it in the last
   * `minGapMs` (then `now` is recorded), false otherwise. Replicas tick on their own timers, so
   * with a gap of half the interval a pass starts at least once per interval and rarely twice.
   */
  async claimRun(trx: Trx, name: string, now: Date, minGapMs: number): Promise<boolean> {
    return (await this.claimRunAfter(trx, name, now, minGapMs)) !== false;
  }

  /**
   * `claimRun`, answering when the pass claimed last started (null: never), or false when it is
   * not ours. The previous start is read in the claiming statement: a CTE sees the row as it was.
   */
  private async claimRunAfter(
    trx: Trx,
    name: string,
    now: Date,
    minGapMs: number,
  ): Promise<Date | null | false> {
    const { rows } = await sql<{ previous: Date | null }>`
      WITH previous AS (SELECT ran_at FROM reconciliation_runs WHERE name = ${name})
      INSERT INTO reconciliation_runs (name, ran_at) VALUES (${name}, ${now})
      ON CONFLICT (name) DO UPDATE SET ran_at = EXCLUDED.ran_at
        WHERE reconciliation_runs.ran_at <= ${new Date(now.getTime() - minGapMs)}
      RETURNING (SELECT ran_at FROM previous) AS previous`.execute(sqlOf(trx));
    return rows.length === 0 ? false : (rows[0]!.previous ?? null);
  }

  /**
   * Claims the periodic pass `name` (every `intervalMs`, as `claimRun`) that reads what changed:
   * undefined when it is not ours; otherwise `changedSince`, the `previous` pass's start less one
   * interval (a change committed late, or stamped by a replica whose clock lags, is read twice
   * rather than never), or none when this pass reads everything: the first one, and one every
   * `fullEveryMs` (claimed as `<name>-full`; 0: every pass).
   */
  async claimChangesPass(
    trx: Trx,
    name: string,
    now: Date,
    intervalMs: number,
    fullEveryMs: number,
  ): Promise<{ changedSince?: Date; previous?: Date } | undefined> {
    const previous = await this.claimRunAfter(trx, name, now, intervalMs / 2);
    if (previous === false) return undefined;
    // The full pass's claim is taken whatever `previous` says: the first pass ever is full too.
    const full = fullEveryMs === 0 || (await this.claimRun(trx, `${name}-full`, now, fullEveryMs));
    return full || previous === null
      ? {}
      : { changedSince: new Date(previous.getTime() - intervalMs), previous };
  }

  /**
   * Starts the resumable pass `name` from the first document (its row as `claimRun` left it).
   * Answers the stamp that owns it: `progressResumable` moves it on only while it is unchanged.
   */
  async startResumable(trx: Trx, name: string, now: Date): Promise<Date> {
    await sqlOf(trx)
      .insertInto('reconciliation_runs')
      .values({ name, ran_at: now, resume_after: NIL_UUID, progressed_at: now })
      .onConflict((conflict) =>
        conflict.column('name').doUpdateSet({ resume_after: NIL_UUID, progressed_at: now }),
      )
      .execute();
    return now;
  }

  /**
   * Gives the pass `name` claimed at `claimedAt` back, as if it had started at `previous`: a pass
   * of changes stopped before its end, so that the next one reads from where this one did.
   */
  async unclaimRun(trx: Trx, name: string, claimedAt: Date, previous: Date): Promise<void> {
    await sqlOf(trx)
      .updateTable('reconciliation_runs')
      .set({ ran_at: previous })
      .where('name', '=', name)
      .where('ran_at', '=', claimedAt)
      .execute();
  }

  /**
   * Takes over the resumable pass `name` if it is unfinished and made no progress since
   * `staleBefore` (its replica stopped or died): the id it stopped after, and the stamp that now
   * owns it; undefined when there is none to take.
   */
  async takeOverResumable(
    trx: Trx,
    name: string,
    now: Date,
    staleBefore: Date,
  ): Promise<{ after: string; stamp: Date } | undefined> {
    const row = await sqlOf(trx)
      .updateTable('reconciliation_runs')
      .set({ progressed_at: now })
      .where('name', '=', name)
      .where('resume_after', 'is not', null)
      .where('progressed_at', '<', staleBefore)
      .returning('resume_after')
      .executeTakeFirst();
    return row?.resume_after ? { after: row.resume_after, stamp: now } : undefined;
  }

  /**
   * Records that the resumable pass `name` sent every document up to `after` (null: all of them,
   * the pass is done), if `stamp` still owns it. False when another replica took it over.
   */
  async progressResumable(
    trx: Trx,
    name: string,
    stamp: Date,
    now: Date,
    after: string | null,
  ): Promise<boolean> {
    const result = await sqlOf(trx)
      .updateTable('reconciliation_runs')
      .set({ resume_after: after, progressed_at: now })
      .where('name', '=', name)
      .where('progressed_at', '=', stamp)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Every tenant's documents after `after` (by id), with who may read them and their version;
   * with `changedSince`, those changed since (`updated_at`, which every change of readers moves),
   * and with `everyAfter` as well, every document after that id too (a full pass resumed).
   */
  async accessPage(
    trx: Trx,
    after: string | undefined,
    limit: number,
    scope: AccessScope = {},
  ): Promise<Array<Pick<DocumentRecord, 'id' | 'tenantId' | 'principals' | 'metaVersion'>>> {
    const { changedSince, everyAfter } = scope;
    let query = sqlOf(trx)
      .selectFrom('documents')
      .select(['id', 'tenant_id', 'principals', 'meta_version'])
      .orderBy('id')
      .limit(limit);
    if (after) query = query.where('id', '>', after);
    if (changedSince && everyAfter) {
      query = query.where((eb) =>
        eb.or([eb('updated_at', '>=', changedSince), eb('id', '>', everyAfter)]),
      );
    } else if (changedSince) query = query.where('updated_at', '>=', changedSince);
    return (await query.execute()).map((row) => ({
      id: row.id,
      tenantId: toTenantId(row.tenant_id),
      principals: row.principals,
      metaVersion: row.meta_version,
    }));
  }

  /**
   * The tenants with a document whose membership no longer matches its tags and the tag rules;
   * with `changedSince`, among the documents changed since and those of tenants with a knowledge
   * base changed since (a drift follows a change of tags or of a rule).
   */
  async tenantsWithDriftedMemberships(trx: Trx, changedSince?: Date): Promise<TenantId[]> {
    // `= ANY(ARRAY(...))`, not `IN (...)`: the planner then ORs two index scans (0.5 ms at 86,317
    // documents) where `IN` read every row (60 ms).
    const scope = changedSince
      ? sql<boolean>`(d.updated_at >= ${changedSince} OR d.tenant_id = ANY(ARRAY(
          SELECT tenant_id FROM knowledge_bases WHERE updated_at >= ${changedSince})))`
      : sql<boolean>`true`;
    const tenants = await sql<{ tenant_id: string }>`
      SELECT DISTINCT tenant_id FROM (${membershipDrift(scope)}) AS drifted
      ORDER BY tenant_id`.execute(sqlOf(trx));
    return tenants.rows.map((row) => toTenantId(row.tenant_id));
  }
}
