import type { TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, type Selectable, sql } from 'kysely';

import type { LegalHolds } from '../platform/db.generated';
import type { DocumentDatabase } from '../platform/db.types';
import { DB } from '../platform/tokens';
import { sqlOf, type Trx } from '../platform/transaction.runner';
import { anyHoldSql, holdCoversSql, holdNameSql } from './held-documents.sql';
import {
  type ActiveHold,
  activeHoldOf,
  type HoldListQuery,
  type HoldRecord,
  type HoldScope,
} from './legal-hold.model';
import { LegalHoldsRepository } from './legal-holds.repository';

/**
 * The tenant's hold lock: a transaction-scoped advisory lock on the tenant's key. Deleters take
 * it shared (they run side by side), placing and releasing a hold exclusively.
 */
const holdLockKey = (tenantId: TenantId) =>
  sql`hashtextextended(${`legal_holds:${tenantId}`}::text, 0)`;

@Injectable()
export class SqlLegalHoldsRepository extends LegalHoldsRepository {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {
    super();
  }

  async lockExclusive(trx: Trx, tenantId: TenantId): Promise<void> {
    await sql`SELECT pg_advisory_xact_lock(${holdLockKey(tenantId)})`.execute(sqlOf(trx));
  }

  async activeHolds(trx: Trx, tenantId: TenantId): Promise<ActiveHold[]> {
    const db = sqlOf(trx);
    await sql`SELECT pg_advisory_xact_lock_shared(${holdLockKey(tenantId)})`.execute(db);
    const rows = await db
      .selectFrom('legal_holds')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('released_at', 'is', null)
      .orderBy('placed_at')
      .execute();
    return rows.map((row) => activeHoldOf(toHold(row)));
  }

  async heldAmong(
    trx: Trx,
    tenantId: TenantId,
    documentIds: string[],
  ): Promise<Map<string, string>> {
    const holds = await this.activeHolds(trx, tenantId);
    if (holds.length === 0 || documentIds.length === 0) return new Map();
    const rows = await sqlOf(trx)
      .selectFrom('documents')
      .select(['id', holdNameSql(holds).as('hold')])
      .where('tenant_id', '=', tenantId)
      .where(sql<boolean>`id = ANY(${documentIds}::uuid[])`)
      .where(anyHoldSql(holds))
      .execute();
    return new Map(rows.map((row) => [row.id, row.hold ?? '']));
  }

  async insert(trx: Trx, hold: HoldRecord): Promise<void> {
    await sqlOf(trx)
      .insertInto('legal_holds')
      .values({
        tenant_id: hold.tenantId,
        id: hold.id,
        name: hold.name,
        reason: hold.reason,
        scope: hold.scope,
        knowledge_base_id: hold.knowledgeBaseId,
        document_ids: hold.documentIds,
        where_filter: hold.where,
        placed_by: hold.placedBy,
        placed_at: hold.placedAt,
      })
      .execute();
  }

  async find(tenantId: TenantId, id: string, trx?: Trx): Promise<HoldRecord | undefined> {
    const row = await (trx ? sqlOf(trx) : this.db)
      .selectFrom('legal_holds')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toHold(row) : undefined;
  }

  async list(tenantId: TenantId, query: HoldListQuery): Promise<HoldRecord[]> {
    let select = this.db.selectFrom('legal_holds').selectAll().where('tenant_id', '=', tenantId);
    if (query.state === 'active') select = select.where('released_at', 'is', null);
    if (query.state === 'released') select = select.where('released_at', 'is not', null);
    const rows = await select
      .orderBy('placed_at', 'desc')
      .orderBy('id')
      .limit(query.limit)
      .execute();
    return rows.map(toHold);
  }

  async release(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    release: { by: string; at: Date; reason: string },
  ): Promise<HoldRecord | undefined> {
    const row = await sqlOf(trx)
      .updateTable('legal_holds')
      .set({ released_by: release.by, released_at: release.at, release_reason: release.reason })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('released_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    return row ? toHold(row) : undefined;
  }

  async countHeld(tenantId: TenantId, hold: ActiveHold): Promise<number> {
    const row = await this.db
      .selectFrom('documents')
      .select(sql<string>`count(*)`.as('n'))
      .where('tenant_id', '=', tenantId)
      .where(holdCoversSql(hold))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

function toHold(row: Selectable<LegalHolds>): HoldRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    reason: row.reason,
    scope: row.scope as HoldScope,
    knowledgeBaseId: row.knowledge_base_id,
    documentIds: row.document_ids,
    where: row.where_filter,
    placedBy: row.placed_by,
    placedAt: row.placed_at,
    releasedBy: row.released_by,
    releasedAt: row.released_at,
    releaseReason: row.release_reason,
  };
}
