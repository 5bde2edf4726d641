import type { TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, sql } from 'kysely';

import type { DocumentDatabase } from '../platform/db.types';
import { DB } from '../platform/tokens';
import type { Activity, QuotaLimits } from './usage.model';

/** One day's counts of a tenant ('' knowledge base) or of one of its knowledge bases. */
export interface ActivityRow extends Activity {
  tenantId: string;
  knowledgeBaseId: string;
  day: string;
}

export interface QuotaRow extends Required<QuotaLimits> {
  knowledgeBaseId: string;
}

export interface Stored {
  documents: number;
  bytes: number;
  chunks: number;
}

const num = (value: string | number | bigint | null): number | null =>
  value === null ? null : Number(value);

/** The SQL of `usage_daily` and `quotas`, and the counts of what a tenant stores. */
@Injectable()
export class UsageRepository {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {}

  /** Adds a batch of counts in one statement; rows of the same key add up. */
  async addActivity(rows: ActivityRow[]): Promise<void> {
    if (rows.length === 0) return;
    const json = rows.map((r) => ({
      tenant_id: r.tenantId,
      knowledge_base_id: r.knowledgeBaseId,
      day: r.day,
      searches: r.searches,
      context_calls: r.contextCalls,
      reranks: r.reranks,
      uploads: r.uploads,
    }));
    // A recordset cast the builder cannot type; ON CONFLICT adds to the day's counts.
    await sql`
      INSERT INTO usage_daily (tenant_id, knowledge_base_id, day, searches, context_calls, reranks,
                               uploads)
      SELECT tenant_id, knowledge_base_id, day, sum(searches), sum(context_calls), sum(reranks),
             sum(uploads)
        FROM jsonb_to_recordset(${JSON.stringify(json)}::jsonb)
               AS r(tenant_id text, knowledge_base_id text, day date, searches bigint,
                    context_calls bigint, reranks bigint, uploads bigint)
       GROUP BY tenant_id, knowledge_base_id, day
      ON CONFLICT (tenant_id, day, knowledge_base_id) DO UPDATE SET
        searches = usage_daily.searches + excluded.searches,
        context_calls = usage_daily.context_calls + excluded.context_calls,
        reranks = usage_daily.reranks + excluded.reranks,
        uploads = usage_daily.uploads + excluded.uploads`.execute(this.db);
  }

  /** The days from `from` to `to` (inclusive) that have counts, oldest first. */
  async activity(
    tenantId: TenantId,
    knowledgeBaseId: string,
    from: string,
    to: string,
  ): Promise<Array<Activity & { day: string }>> {
    const rows = await this.db
      .selectFrom('usage_daily')
      .select(['searches', 'context_calls', 'reranks', 'uploads'])
      .select(sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day'))
      .where('tenant_id', '=', tenantId)
      .where('knowledge_base_id', '=', knowledgeBaseId)
      .where('day', '>=', new Date(`${from}T00:00:00Z`))
      .where('day', '<=', new Date(`${to}T00:00:00Z`))
      .orderBy('day')
      .execute();
    return rows.map((r) => ({
      day: r.day,
      searches: Number(r.searches),
      contextCalls: Number(r.context_calls),
      reranks: Number(r.reranks),
      uploads: Number(r.uploads),
    }));
  }

  /** What the tenant stores, in all and in each knowledge base (a document counts in each of its). */
  async stored(
    tenantId: TenantId,
  ): Promise<{ total: Stored; knowledgeBases: Array<Stored & { id: string }> }> {
    const total = await this.db
      .selectFrom('documents')
      .select((eb) => [
        eb.fn.countAll<string>().as('documents'),
        sql<string>`coalesce(sum(size_bytes), 0)`.as('bytes'),
        sql<string>`coalesce(sum(chunk_count), 0)`.as('chunks'),
      ])
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    // unnest is a table function the builder cannot type.
    const { rows } = await sql<{ id: string; documents: string; bytes: string; chunks: string }>`
      SELECT kb.id, count(*) AS documents, coalesce(sum(d.size_bytes), 0) AS bytes,
             coalesce(sum(d.chunk_count), 0) AS chunks
        FROM documents d CROSS JOIN LATERAL unnest(d.knowledge_base_ids) AS kb(id)
       WHERE d.tenant_id = ${tenantId}
       GROUP BY kb.id ORDER BY kb.id`.execute(this.db);
    return {
      total: storedOf(total),
      knowledgeBases: rows.map((r) => ({ id: r.id, ...storedOf(r) })),
    };
  }

  /** Documents and bytes of the tenant ('' ) or of one knowledge base: the counts a limit needs. */
  async storedIn(tenantId: TenantId, knowledgeBaseId: string): Promise<Stored> {
    let query = this.db
      .selectFrom('documents')
      .select((eb) => [
        eb.fn.countAll<string>().as('documents'),
        sql<string>`coalesce(sum(size_bytes), 0)`.as('bytes'),
        sql<string>`0`.as('chunks'),
      ])
      .where('tenant_id', '=', tenantId);
    if (knowledgeBaseId !== '') {
      query = query.where(sql<boolean>`knowledge_base_ids @> ARRAY[${knowledgeBaseId}]::text[]`);
    }
    return storedOf(await query.executeTakeFirstOrThrow());
  }

  async knowledgeBaseCount(tenantId: TenantId): Promise<number> {
    const row = await this.db
      .selectFrom('knowledge_bases')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async knowledgeBaseExists(tenantId: TenantId, id: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('knowledge_bases')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The limits the tenant's admins set: the tenant's ('' ) and its knowledge bases'. */
  async quotas(tenantId: TenantId): Promise<QuotaRow[]> {
    const rows = await this.db
      .selectFrom('quotas')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('knowledge_base_id')
      .execute();
    return rows.map((r) => ({
      knowledgeBaseId: r.knowledge_base_id,
      maxDocuments: num(r.max_documents),
      maxBytes: num(r.max_bytes),
      maxKnowledgeBases: num(r.max_knowledge_bases),
      maxSearchesPerDay: num(r.max_searches_per_day),
    }));
  }

  async setQuotas(tenantId: TenantId, row: QuotaRow, by: string, now: Date): Promise<void> {
    const values = {
      max_documents: row.maxDocuments,
      max_bytes: row.maxBytes,
      max_knowledge_bases: row.maxKnowledgeBases,
      max_searches_per_day: row.maxSearchesPerDay,
      updated_at: now,
      updated_by: by,
    };
    await this.db
      .insertInto('quotas')
      .values({ tenant_id: tenantId, knowledge_base_id: row.knowledgeBaseId, ...values })
      .onConflict((oc) => oc.columns(['tenant_id', 'knowledge_base_id']).doUpdateSet(values))
      .execute();
  }
}

const storedOf = (row: { documents: string; bytes: string; chunks: string }): Stored => ({
  documents: Number(row.documents),
  bytes: Number(row.bytes),
  chunks: Number(row.chunks),
});
