import { type ChunkerConfig, parsingSettingsSchema, type TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, type Selectable, sql } from 'kysely';

import type { PipelineSetting, TagRule } from '../pipelines/pipeline.model';
import type { DocumentDatabase, KnowledgeBasesTable } from '../platform/db.types';
import { DB } from '../platform/tokens';
import { sqlOf, type Trx } from '../platform/transaction.runner';
import type { KnowledgeBaseView, RetentionFrom } from './knowledge-base.model';
import {
  type KnowledgeBaseChange,
  type KnowledgeBasePageQuery,
  KnowledgeBasesRepository,
  type NewKnowledgeBase,
} from './knowledge-bases.repository';

/** The only SQL on `knowledge_bases` (and whether a knowledge base still has documents). */
@Injectable()
export class SqlKnowledgeBasesRepository extends KnowledgeBasesRepository {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {
    super();
  }

  async insert(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBase: NewKnowledgeBase,
  ): Promise<KnowledgeBaseView | undefined> {
    const row = await sqlOf(trx)
      .insertInto('knowledge_bases')
      .values({
        tenant_id: tenantId,
        id: knowledgeBase.id,
        name: knowledgeBase.name,
        description: knowledgeBase.description,
        chunker: JSON.stringify(knowledgeBase.chunker),
        embedding_model: knowledgeBase.embeddingModel,
        embedding_dimension: knowledgeBase.embeddingDimension,
        tag_rule: knowledgeBase.tagRule,
        metadata: JSON.stringify(knowledgeBase.metadata),
        allow_precomputed_vectors: knowledgeBase.allowPrecomputedVectors,
        context_rerank: knowledgeBase.contextRerank,
        retention_days: knowledgeBase.retentionDays ?? null,
        retention_from: knowledgeBase.retentionFrom ?? 'uploaded',
        pii: knowledgeBase.pii,
        parsing: knowledgeBase.parsing ? JSON.stringify(knowledgeBase.parsing) : null,
        created_at: knowledgeBase.now,
        updated_at: knowledgeBase.now,
      })
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst();
    return row ? toView(row) : undefined;
  }

  async find(tenantId: TenantId, id: string): Promise<KnowledgeBaseView | undefined> {
    const row = await this.db
      .selectFrom('knowledge_bases')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toView(row) : undefined;
  }

  async list(tenantId: TenantId): Promise<KnowledgeBaseView[]> {
    const rows = await this.db
      .selectFrom('knowledge_bases')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('id')
      .execute();
    return rows.map(toView);
  }

  async page(
    tenantId: TenantId,
    query: KnowledgeBasePageQuery,
  ): Promise<{ items: KnowledgeBaseView[]; total: number }> {
    let matching = this.db.selectFrom('knowledge_bases').where('tenant_id', '=', tenantId);
    if (query.name) {
      const pattern = `%${query.name.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      matching = matching.where((eb) =>
        eb.or([eb('name', 'ilike', pattern), eb('id', 'ilike', pattern)]),
      );
    }
    let page = matching.selectAll().orderBy('id').limit(query.limit);
    if (query.afterId !== undefined) page = page.where('id', '>', query.afterId);
    if (query.offset !== undefined) page = page.offset(query.offset);
    const [rows, count] = await Promise.all([
      page.execute(),
      matching.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toView), total: count.n };
  }

  async update(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    change: KnowledgeBaseChange,
    now: Date,
  ): Promise<KnowledgeBaseView | undefined> {
    // Kysely leaves out the fields that are undefined: they keep their value.
    const row = await sqlOf(trx)
      .updateTable('knowledge_bases')
      .set({
        name: change.name,
        description: change.description,
        tag_rule: change.tagRule,
        metadata:
          change.metadata === undefined
            ? undefined
            : change.metadata.merge
              ? sql<string>`jsonb_strip_nulls(metadata || ${JSON.stringify(change.metadata.values)}::jsonb)`
              : JSON.stringify(change.metadata.values),
        allow_precomputed_vectors: change.allowPrecomputedVectors,
        context_rerank: change.contextRerank,
        retention_days: change.retentionDays,
        retention_from: change.retentionFrom,
        pii: change.pii,
        updated_at: now,
      })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row ? toView(row) : undefined;
  }

  async hasDocuments(tenantId: TenantId, id: string): Promise<boolean> {
    const member = await this.db
      .selectFrom('documents')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where(sql<boolean>`knowledge_base_ids @> ARRAY[${id}]::text[]`)
      .limit(1)
      .executeTakeFirst();
    return member !== undefined;
  }

  async delete(trx: Trx, tenantId: TenantId, id: string): Promise<boolean> {
    const result = await sqlOf(trx)
      .deleteFrom('knowledge_bases')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async existingIds(tenantId: TenantId, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .selectFrom('knowledge_bases')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', ids)
      .execute();
    return rows.map((row) => row.id);
  }

  async tagRulesOf(trx: Trx, tenantId: TenantId): Promise<TagRule[]> {
    const rows = await sqlOf(trx)
      .selectFrom('knowledge_bases')
      .select(['id', 'tag_rule'])
      .where('tenant_id', '=', tenantId)
      .where(sql<boolean>`cardinality(tag_rule) > 0`)
      .orderBy('id')
      .execute();
    return rows.map((row) => ({ knowledgeBaseId: row.id, anyOf: row.tag_rule }));
  }

  async pipelineSettingsOf(
    trx: Trx,
    tenantId: TenantId,
    ids: string[],
  ): Promise<PipelineSetting[]> {
    if (ids.length === 0) return [];
    const rows = await sqlOf(trx)
      .selectFrom('knowledge_bases')
      .select(['id', 'chunker', 'embedding_model', 'pii', 'parsing'])
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', ids)
      .execute();
    return rows.map((row) => ({
      knowledgeBaseId: row.id,
      chunker: row.chunker,
      embeddingModel: row.embedding_model,
      pii: row.pii,
      parsing: row.parsing,
    }));
  }
}

const toView = (row: Selectable<KnowledgeBasesTable>): KnowledgeBaseView => ({
  id: row.id,
  name: row.name,
  description: row.description,
  chunker: row.chunker as ChunkerConfig, // validated when it was written
  embeddingModel: row.embedding_model,
  embeddingDimension: row.embedding_dimension,
  tagRule: { anyOf: row.tag_rule },
  metadata: row.metadata,
  allowPrecomputedVectors: row.allow_precomputed_vectors,
  contextRerank: row.context_rerank,
  retentionDays: row.retention_days,
  retentionFrom: row.retention_from as RetentionFrom,
  pii: row.pii,
  // Validated when it was written; NULL reads as the defaults.
  parsing: parsingSettingsSchema.parse(row.parsing ?? {}),
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
});
