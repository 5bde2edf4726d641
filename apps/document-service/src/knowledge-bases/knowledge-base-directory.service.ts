import type { Pipeline, PipelineDefaults, TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';

import { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import {
  DEFAULT_KNOWLEDGE_BASE,
  distinctPipelines,
  knowledgeBasesOrDefault,
  type TagRule,
} from '../pipelines/pipeline.model';
import { PIPELINE_DEFAULTS } from '../pipelines/pipeline-defaults.provider';
import type { Trx } from '../platform/transaction.runner';
import {
  KnowledgeBaseError,
  KnowledgeBaseErrorCode,
  knowledgeBaseNotFound,
} from './knowledge-bases.errors';
import { KnowledgeBasesRepository } from './knowledge-bases.repository';
import { MODEL_CATALOG, type ModelCatalog } from './model-catalog.client';

/** What documents ask of knowledge bases, answered from the repository and the pipeline defaults. */
@Injectable()
export class KnowledgeBaseDirectoryService extends KnowledgeBaseDirectory {
  constructor(
    private readonly knowledgeBases: KnowledgeBasesRepository,
    @Inject(PIPELINE_DEFAULTS) private readonly defaults: PipelineDefaults,
    @Inject(MODEL_CATALOG) private readonly models: ModelCatalog,
  ) {
    super();
  }

  async requireExisting(tenantId: TenantId, ids: string[]): Promise<void> {
    const wanted = [...new Set(ids)].filter((id) => id !== DEFAULT_KNOWLEDGE_BASE);
    if (wanted.length === 0) return;
    const found = await this.knowledgeBases.existingIds(tenantId, wanted);
    const missing = wanted.filter((id) => !found.includes(id));
    if (missing.length > 0) {
      throw new KnowledgeBaseError(
        KnowledgeBaseErrorCode.UnknownKnowledgeBase,
        `no knowledge base ${missing.join(', ')}: create it first (POST /v1/knowledge-bases)`,
      );
    }
  }

  async requireFound(tenantId: TenantId, id: string): Promise<void> {
    if (!(await this.knowledgeBases.find(tenantId, id))) throw knowledgeBaseNotFound(id);
  }

  async embeddingSpaceOf(
    tenantId: TenantId,
    id: string,
  ): Promise<{
    pipeline: Pipeline;
    dimension: number | undefined;
    allowPrecomputedVectors: boolean;
  }> {
    const knowledgeBase =
      id === DEFAULT_KNOWLEDGE_BASE ? undefined : await this.knowledgeBases.find(tenantId, id);
    if (id !== DEFAULT_KNOWLEDGE_BASE && !knowledgeBase) throw knowledgeBaseNotFound(id);
    const model = knowledgeBase?.embeddingModel ?? this.defaults.model;
    // Computed as the document's pipelines are (`pipelinesOf`): the stored chunker parsed, so a
    // jsonb column's key order cannot give it another key (the vectors would then be dropped and
    // the joined text parsed and embedded instead).
    const [pipeline] = distinctPipelines(
      tenantId,
      [id],
      knowledgeBase
        ? [
            {
              knowledgeBaseId: id,
              chunker: knowledgeBase.chunker,
              embeddingModel: model,
              pii: knowledgeBase.pii,
            },
          ]
        : [],
      this.defaults,
    );
    const dimension = knowledgeBase?.embeddingDimension ?? (await this.models.dimensionOf(model));
    // `default` has no row, so no setting: it never takes pre-computed vectors (ADR 33).
    const allowPrecomputedVectors = knowledgeBase?.allowPrecomputedVectors ?? false;
    return { pipeline: pipeline!, dimension, allowPrecomputedVectors };
  }

  tagRulesOf(trx: Trx, tenantId: TenantId): Promise<TagRule[]> {
    return this.knowledgeBases.tagRulesOf(trx, tenantId);
  }

  async pipelinesOf(trx: Trx, tenantId: TenantId, knowledgeBaseIds: string[]): Promise<Pipeline[]> {
    const ids = knowledgeBasesOrDefault(knowledgeBaseIds);
    const settings = await this.knowledgeBases.pipelineSettingsOf(trx, tenantId, ids);
    return distinctPipelines(tenantId, ids, settings, this.defaults);
  }
}
