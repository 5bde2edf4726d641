import { isDeepStrictEqual } from 'node:util';

import type { Access } from '@kb/auth';
import { chunkerConfigSchema, type PipelineDefaults, type TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';

import { requireDocumentAction } from '../access/document-actions';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { PIPELINE_DEFAULTS } from '../pipelines/pipeline-defaults.provider';
import { TagRuleMembership } from '../pipelines/tag-rule-membership.port';
import { CLOCK, type Clock, QUOTA_CHECK } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import type { QuotaCheck } from '../usage/usage.service';
import type {
  CreateKnowledgeBase,
  KnowledgeBaseView,
  UpdateKnowledgeBase,
} from './knowledge-base.model';
import {
  KnowledgeBaseError,
  KnowledgeBaseErrorCode,
  knowledgeBaseNotFound,
} from './knowledge-bases.errors';
import { KnowledgeBasesRepository } from './knowledge-bases.repository';
import { MODEL_CATALOG, type ModelCatalog } from './model-catalog.client';

/**
 * Pre-computed vectors place a chunk anywhere in the vector space, whatever its text says (review
 * N9): only a tenant admin may let a knowledge base take them. Turning them off needs only write.
 */
function requireAdminToAllowPrecomputed(access: Access): void {
  if (!access.isAdmin) {
    throw new KnowledgeBaseError(
      KnowledgeBaseErrorCode.PermissionDenied,
      `only a tenant admin may set allowPrecomputedVectors to true (${access.userId} is not one)`,
    );
  }
}

/** A retention policy deletes documents: a tenant admin sets it (docs/adr/0052). */
function requireAdminForRetention(access: Access): void {
  if (!access.isAdmin) {
    throw new KnowledgeBaseError(
      KnowledgeBaseErrorCode.PermissionDenied,
      `only a tenant admin may set a retention policy (${access.userId} is not one)`,
    );
  }
}

/**
 * Knowledge bases of a tenant. The pipeline a knowledge base was created with (chunker and its
 * parameters, embedding model) cannot change: vectors made another way would not be comparable,
 * so such a change is a 409 that says to create a new knowledge base. Its tag rule can change:
 * documents move in or out in the same transaction.
 */
@Injectable()
export class KnowledgeBasesService {
  constructor(
    private readonly knowledgeBases: KnowledgeBasesRepository,
    private readonly transactions: TransactionRunner,
    private readonly membership: TagRuleMembership,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(MODEL_CATALOG) private readonly models: ModelCatalog,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(PIPELINE_DEFAULTS) private readonly defaults: PipelineDefaults,
    @Inject(QUOTA_CHECK) private readonly quotas: QuotaCheck,
  ) {}

  async create(
    tenantId: TenantId,
    access: Access,
    input: CreateKnowledgeBase,
  ): Promise<KnowledgeBaseView> {
    requireDocumentAction(access, 'write');
    if (input.allowPrecomputedVectors) requireAdminToAllowPrecomputed(access);
    if (input.retentionDays != null || input.retentionFrom) requireAdminForRetention(access);
    await this.quotas.beforeKnowledgeBase(tenantId);
    const model = input.embeddingModel ?? this.defaults.model;
    // Detected, not declared: the model must be served, and its dimension is what it produces.
    const dimension = await this.models.dimensionOf(model);
    if (dimension === undefined) {
      throw new KnowledgeBaseError(
        KnowledgeBaseErrorCode.ModelNotServed,
        `embedding model "${model}" is not served by this deployment (its default is "${this.defaults.model}")`,
      );
    }
    const now = this.clock();
    const { created, changed } = await this.transactions.run(async (trx) => {
      const created = await this.knowledgeBases.insert(trx, tenantId, {
        id: input.id,
        name: input.name,
        description: input.description,
        chunker: input.chunker ?? this.defaults.chunker,
        embeddingModel: model,
        embeddingDimension: dimension,
        tagRule: [...new Set(input.tagRule.anyOf)],
        metadata: input.metadata ?? {},
        allowPrecomputedVectors: input.allowPrecomputedVectors ?? false,
        contextRerank: input.contextRerank ?? false,
        retentionDays: input.retentionDays ?? null,
        retentionFrom: input.retentionFrom ?? 'uploaded',
        pii: input.pii ?? 'off',
        parsing: input.parsing,
        now,
      });
      if (!created) {
        throw new KnowledgeBaseError(
          KnowledgeBaseErrorCode.Exists,
          `knowledge base ${input.id} already exists`,
        );
      }
      // Documents already carrying the rule's tags join it now.
      return { created, changed: await this.membership.applyTagRules(trx, tenantId, now) };
    });
    if (changed.length > 0) this.outbox.wake();
    return created;
  }

  async get(tenantId: TenantId, id: string): Promise<KnowledgeBaseView> {
    const knowledgeBase = await this.knowledgeBases.find(tenantId, id);
    if (!knowledgeBase) throw knowledgeBaseNotFound(id);
    return knowledgeBase;
  }

  list(tenantId: TenantId): Promise<KnowledgeBaseView[]> {
    return this.knowledgeBases.list(tenantId);
  }

  async update(
    tenantId: TenantId,
    access: Access,
    id: string,
    input: UpdateKnowledgeBase,
    merge = true,
  ): Promise<KnowledgeBaseView> {
    requireDocumentAction(access, 'write');
    const current = await this.get(tenantId, id);
    const requested = {
      chunker:
        input.chunker === undefined ? undefined : chunkerConfigSchema.safeParse(input.chunker).data,
      embeddingModel: input.embeddingModel,
    };
    for (const field of ['chunker', 'embeddingModel'] as const) {
      // Sending the current value back is not a change; anything else is.
      if (input[field] !== undefined && !isDeepStrictEqual(requested[field], current[field])) {
        throw new KnowledgeBaseError(
          KnowledgeBaseErrorCode.ImmutableField,
          `${field} is fixed when a knowledge base is created: create a new knowledge base with the new ${field} and move the documents to it`,
        );
      }
    }
    if (input.allowPrecomputedVectors && !current.allowPrecomputedVectors) {
      requireAdminToAllowPrecomputed(access);
    }
    if (input.retentionDays !== undefined || input.retentionFrom !== undefined) {
      requireAdminForRetention(access);
    }
    const now = this.clock();
    const { updated, changed } = await this.transactions.run(async (trx) => {
      const updated = await this.knowledgeBases.update(
        trx,
        tenantId,
        id,
        {
          name: input.name,
          description: input.description,
          tagRule: input.tagRule && [...new Set(input.tagRule.anyOf)],
          metadata: input.metadata && { values: input.metadata, merge },
          allowPrecomputedVectors: input.allowPrecomputedVectors,
          contextRerank: input.contextRerank,
          retentionDays: input.retentionDays,
          retentionFrom: input.retentionFrom,
          pii: input.pii,
        },
        now,
      );
      if (!updated) throw knowledgeBaseNotFound(id);
      // A new rule adds and removes documents; their indexes update in place (no re-embedding).
      const changed = input.tagRule ? await this.membership.applyTagRules(trx, tenantId, now) : [];
      return { updated, changed };
    });
    if (changed.length > 0) this.outbox.wake();
    return updated;
  }
}
