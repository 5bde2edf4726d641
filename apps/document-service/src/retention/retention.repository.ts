import type { TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, sql } from 'kysely';

import type { DeletedDocument } from '../documents/documents.repository';
import { holdNameSql } from '../holds/held-documents.sql';
import type { ActiveHold } from '../holds/legal-hold.model';
import type { DocumentDatabase } from '../platform/db.types';
import { DB } from '../platform/tokens';
import { sqlOf, type Trx } from '../platform/transaction.runner';
import { deleteClaimed } from './claimed-delete.sql';
import { dueAtSql, mayBeDueSql } from './retention-due.sql';

/** A document the next retention run deletes, or one a hold keeps. */
export interface DueDocument {
  id: string;
  title: string;
  dueAt: Date;
  /** The name of a hold covering it: retention skips it. */
  hold: string | null;
}

/**
 * The retention run's SQL (docs/adr/0052), kept apart so that it can move onto the job queue
 * (issue 35): which tenants have documents due, and the claim that deletes a batch of them.
 */
@Injectable()
export class RetentionRepository {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {}

  /** Up to `limit` tenants with a document due at `now`. */
  async tenantsDue(now: Date, limit: number): Promise<TenantId[]> {
    const rows = await this.db
      .selectFrom('documents')
      .select('tenant_id')
      .distinct()
      .where(mayBeDueSql(now))
      .where(sql<boolean>`${dueAtSql} <= ${now}`)
      .limit(limit)
      .execute();
    return rows.map((row) => row.tenant_id as TenantId);
  }

  /** Deletes up to `limit` of the tenant's documents due at `now` that no hold covers. */
  deleteDue(
    trx: Trx,
    tenantId: TenantId,
    now: Date,
    holds: ActiveHold[],
    limit: number,
  ): Promise<DeletedDocument[]> {
    const due = sql<boolean>`(${mayBeDueSql(now)} AND ${dueAtSql} <= ${now})`;
    return deleteClaimed(trx, tenantId, due, holds, limit);
  }

  /** The documents of a knowledge base due at `now`, held ones with their hold, by due date. */
  async preview(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBaseId: string,
    now: Date,
    holds: ActiveHold[],
    limit: number,
  ): Promise<DueDocument[]> {
    const rows = await sqlOf(trx)
      .selectFrom('documents')
      .select(['id', 'title', dueAtSql.as('due_at'), holdNameSql(holds).as('hold')])
      .where('tenant_id', '=', tenantId)
      .where(sql<boolean>`knowledge_base_ids @> ARRAY[${knowledgeBaseId}::text]`)
      .where(mayBeDueSql(now))
      .where(sql<boolean>`${dueAtSql} <= ${now}`)
      .orderBy('due_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      id: row.id,
      title: row.title,
      dueAt: new Date(row.due_at!),
      hold: row.hold,
    }));
  }
}
