import { parsingSettingsSchema, type TenantId } from '@kb/contracts';

import type { KnowledgeBaseView } from '../knowledge-bases/knowledge-base.model';
import {
  type KnowledgeBaseChange,
  type KnowledgeBasePageQuery,
  KnowledgeBasesRepository,
  type NewKnowledgeBase,
} from '../knowledge-bases/knowledge-bases.repository';
import type { PipelineSetting, TagRule } from '../pipelines/pipeline.model';
import type { Trx } from '../platform/transaction.runner';
import {
  clone,
  type InMemoryDatabase,
  keyOf,
  type StoredKnowledgeBase,
} from './in-memory.database';
import { openTrx } from './in-memory-transaction.runner';

/** `KnowledgeBasesRepository` over `InMemoryDatabase`, with the semantics of the SQL one. */
export class InMemoryKnowledgeBasesRepository extends KnowledgeBasesRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async insert(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBase: NewKnowledgeBase,
  ): Promise<KnowledgeBaseView | undefined> {
    const { id: trxId } = openTrx(trx);
    const key = keyOf(tenantId, knowledgeBase.id);
    if (this.db.knowledgeBases.has(key)) return undefined;
    const at = knowledgeBase.now.toISOString();
    const view: KnowledgeBaseView = {
      id: knowledgeBase.id,
      name: knowledgeBase.name,
      description: knowledgeBase.description,
      chunker: knowledgeBase.chunker,
      embeddingModel: knowledgeBase.embeddingModel,
      embeddingDimension: knowledgeBase.embeddingDimension,
      tagRule: { anyOf: knowledgeBase.tagRule },
      metadata: knowledgeBase.metadata,
      allowPrecomputedVectors: knowledgeBase.allowPrecomputedVectors,
      contextRerank: knowledgeBase.contextRerank,
      retentionDays: knowledgeBase.retentionDays ?? null,
      retentionFrom: knowledgeBase.retentionFrom ?? 'uploaded',
      pii: knowledgeBase.pii,
      parsing: parsingSettingsSchema.parse(knowledgeBase.parsing ?? {}),
      createdAt: at,
      updatedAt: at,
    };
    this.db.knowledgeBases.set(
      key,
      clone({ tenantId, view, chunker: view.chunker, parsing: knowledgeBase.parsing ?? null }),
    );
    this.db.writes.push({ trx: trxId, table: 'knowledge_bases', op: 'insert', key: view.id });
    return view;
  }

  /** Stores a knowledge base as a migration or another writer might have left it. */
  seed(knowledgeBase: StoredKnowledgeBase): void {
    this.db.knowledgeBases.set(
      keyOf(knowledgeBase.tenantId, knowledgeBase.view.id),
      clone(knowledgeBase),
    );
  }

  async find(tenantId: TenantId, id: string): Promise<KnowledgeBaseView | undefined> {
    const stored = this.db.knowledgeBases.get(keyOf(tenantId, id));
    return stored && clone(stored.view);
  }

  async list(tenantId: TenantId): Promise<KnowledgeBaseView[]> {
    return this.of(tenantId).map((kb) => kb.view);
  }

  async page(
    tenantId: TenantId,
    query: KnowledgeBasePageQuery,
  ): Promise<{ items: KnowledgeBaseView[]; total: number }> {
    const needle = query.name?.toLowerCase();
    const matching = this.of(tenantId)
      .map((kb) => kb.view)
      .filter(
        (kb) =>
          !needle || kb.name.toLowerCase().includes(needle) || kb.id.toLowerCase().includes(needle),
      );
    const after = matching.filter((kb) => query.afterId === undefined || kb.id > query.afterId);
    const start = query.offset ?? 0;
    return { items: after.slice(start, start + query.limit), total: matching.length };
  }

  async update(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    change: KnowledgeBaseChange,
    now: Date,
  ): Promise<KnowledgeBaseView | undefined> {
    const { id: trxId } = openTrx(trx);
    const stored = this.db.knowledgeBases.get(keyOf(tenantId, id));
    if (!stored) return undefined;
    const view: KnowledgeBaseView = {
      ...stored.view,
      name: change.name ?? stored.view.name,
      description: change.description ?? stored.view.description,
      tagRule: change.tagRule ? { anyOf: change.tagRule } : stored.view.tagRule,
      metadata: change.metadata
        ? change.metadata.merge
          ? Object.fromEntries(
              Object.entries({ ...stored.view.metadata, ...change.metadata.values }).filter(
                ([, value]) => value !== null,
              ),
            )
          : change.metadata.values
        : stored.view.metadata,
      allowPrecomputedVectors:
        change.allowPrecomputedVectors ?? stored.view.allowPrecomputedVectors,
      contextRerank: change.contextRerank ?? stored.view.contextRerank,
      retentionDays:
        change.retentionDays === undefined ? stored.view.retentionDays : change.retentionDays,
      retentionFrom: change.retentionFrom ?? stored.view.retentionFrom,
      pii: change.pii ?? stored.view.pii,
      updatedAt: now.toISOString(),
    };
    this.db.knowledgeBases.set(keyOf(tenantId, id), clone({ ...stored, view }));
    this.db.writes.push({ trx: trxId, table: 'knowledge_bases', op: 'update', key: id });
    return view;
  }

  async hasDocuments(tenantId: TenantId, id: string): Promise<boolean> {
    return [...this.db.documents.values()].some(
      (d) => d.tenantId === tenantId && d.knowledgeBaseIds.includes(id),
    );
  }

  async delete(trx: Trx, tenantId: TenantId, id: string): Promise<boolean> {
    const { id: trxId } = openTrx(trx);
    this.db.writes.push({ trx: trxId, table: 'knowledge_bases', op: 'delete', key: id });
    return this.db.knowledgeBases.delete(keyOf(tenantId, id));
  }

  async existingIds(tenantId: TenantId, ids: string[]): Promise<string[]> {
    return this.of(tenantId)
      .map((kb) => kb.view.id)
      .filter((id) => ids.includes(id));
  }

  async tagRulesOf(trx: Trx, tenantId: TenantId): Promise<TagRule[]> {
    openTrx(trx);
    return this.of(tenantId)
      .filter((kb) => kb.view.tagRule.anyOf.length > 0)
      .map((kb) => ({ knowledgeBaseId: kb.view.id, anyOf: kb.view.tagRule.anyOf }));
  }

  async pipelineSettingsOf(
    trx: Trx,
    tenantId: TenantId,
    ids: string[],
  ): Promise<PipelineSetting[]> {
    openTrx(trx);
    return this.of(tenantId)
      .filter((kb) => ids.includes(kb.view.id))
      .map((kb) => ({
        knowledgeBaseId: kb.view.id,
        chunker: kb.chunker,
        embeddingModel: kb.view.embeddingModel,
        pii: kb.view.pii,
        parsing: kb.parsing ?? null,
      }));
  }

  /** The tenant's knowledge bases, by id. */
  private of(tenantId: TenantId): StoredKnowledgeBase[] {
    return [...this.db.knowledgeBases.values()]
      .filter((kb) => kb.tenantId === tenantId)
      .sort((a, b) => (a.view.id < b.view.id ? -1 : 1))
      .map((kb) => clone(kb));
  }
}
