import type { ChunkerConfig, ParsingSettings, PiiMode, TenantId } from '@kb/contracts';

import {
  DEFAULT_KNOWLEDGE_BASE,
  type PipelineSetting,
  type TagRule,
} from '../pipelines/pipeline.model';
import type { Trx } from '../platform/transaction.runner';
import type {
  KnowledgeBaseMetadata,
  KnowledgeBaseView,
  RetentionFrom,
} from './knowledge-base.model';
import { knowledgeBaseNotFound } from './knowledge-bases.errors';

export interface NewKnowledgeBase {
  id: string;
  name: string;
  description: string;
  chunker: ChunkerConfig;
  embeddingModel: string;
  embeddingDimension: number;
  /** Distinct tags. */
  tagRule: string[];
  metadata: KnowledgeBaseMetadata;
  allowPrecomputedVectors: boolean;
  contextRerank: boolean;
  /** Absent: none, counted from upload. */
  retentionDays?: number | null;
  retentionFrom?: RetentionFrom;
  pii: PiiMode;
  /** Undefined: the defaults, stored as NULL. */
  parsing: ParsingSettings | undefined;
  now: Date;
}

/** What may change after creation; an absent field stays. */
export interface KnowledgeBaseChange {
  name?: string | undefined;
  description?: string | undefined;
  tagRule?: string[] | undefined;
  /** Merged into the current metadata (null values remove their key) or replacing it. */
  metadata?: { values: KnowledgeBaseMetadata; merge: boolean } | undefined;
  allowPrecomputedVectors?: boolean | undefined;
  contextRerank?: boolean | undefined;
  /** null ends the policy. */
  retentionDays?: number | null | undefined;
  retentionFrom?: RetentionFrom | undefined;
  pii?: PiiMode | undefined;
}

/** Which knowledge bases a page holds. */
export interface KnowledgeBasePageQuery {
  limit: number;
  /** After this id (ids ascending). */
  afterId?: string | undefined;
  offset?: number | undefined;
  /** Case-insensitive part of the name or id. */
  name?: string | undefined;
}

/**
 * The `knowledge_bases` table (`SqlKnowledgeBasesRepository` in Postgres; an in-memory one in
 * unit tests). Every method takes the tenant; those taking a `trx` run in the caller's transaction.
 */
export abstract class KnowledgeBasesRepository {
  /** The new knowledge base, or undefined when the tenant already has one with this id. */
  abstract insert(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBase: NewKnowledgeBase,
  ): Promise<KnowledgeBaseView | undefined>;
  abstract find(tenantId: TenantId, id: string): Promise<KnowledgeBaseView | undefined>;
  /** By id. */
  abstract list(tenantId: TenantId): Promise<KnowledgeBaseView[]>;
  /** One page by id, and how many match the query in all. */
  abstract page(
    tenantId: TenantId,
    query: KnowledgeBasePageQuery,
  ): Promise<{ items: KnowledgeBaseView[]; total: number }>;
  /** The changed knowledge base, or undefined when it is gone. */
  abstract update(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    change: KnowledgeBaseChange,
    now: Date,
  ): Promise<KnowledgeBaseView | undefined>;
  /** Whether any of the tenant's documents belongs to it. */
  abstract hasDocuments(tenantId: TenantId, id: string): Promise<boolean>;
  /** Deletes it in `trx`; whether it was there. */
  abstract delete(trx: Trx, tenantId: TenantId, id: string): Promise<boolean>;
  /** Those of `ids` the tenant has created. */
  abstract existingIds(tenantId: TenantId, ids: string[]): Promise<string[]>;
  /** The tenant's tag rules, by knowledge base id (knowledge bases without one are left out). */
  abstract tagRulesOf(trx: Trx, tenantId: TenantId): Promise<TagRule[]>;
  /** The chunker and model of those of `ids` the tenant has created. */
  abstract pipelineSettingsOf(
    trx: Trx,
    tenantId: TenantId,
    ids: string[],
  ): Promise<PipelineSetting[]>;
}

/** 404 `knowledge_base_not_found` unless `id` is `default` or a knowledge base of the tenant. */
export async function requireKnowledgeBase(
  knowledgeBases: Pick<KnowledgeBasesRepository, 'find'>,
  tenantId: TenantId,
  id: string,
): Promise<void> {
  if (id === DEFAULT_KNOWLEDGE_BASE) return;
  if (!(await knowledgeBases.find(tenantId, id))) throw knowledgeBaseNotFound(id);
}
