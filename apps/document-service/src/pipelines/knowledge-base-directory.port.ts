import type { Pipeline, TenantId } from '@kb/contracts';

import type { Trx } from '../platform/transaction.runner';
import type { TagRule } from './pipeline.model';

/**
 * What documents need to know about a tenant's knowledge bases. Declared here and implemented in
 * `knowledge-bases/`, so that `documents/` does not import it (knowledge bases, in turn, reach
 * documents only through `TagRuleMembership`).
 */
export abstract class KnowledgeBaseDirectory {
  /** Refuses (400 `unknown_knowledge_base`) ids the tenant has not created; `default` always exists. */
  abstract requireExisting(tenantId: TenantId, ids: string[]): Promise<void>;

  /** 404 `knowledge_base_not_found` unless the tenant created this knowledge base. */
  abstract requireFound(tenantId: TenantId, id: string): Promise<void>;

  /** The tenant's tag rules (knowledge bases without one are left out). */
  abstract tagRulesOf(trx: Trx, tenantId: TenantId): Promise<TagRule[]>;

  /**
   * A knowledge base's one pipeline and its model's dimension (undefined when the model's
   * dimension cannot be learnt): what pre-computed embeddings must match; and whether it takes
   * them at all (`default`, which has no settings, does not). 404 when not created.
   */
  abstract embeddingSpaceOf(
    tenantId: TenantId,
    id: string,
  ): Promise<{
    pipeline: Pipeline;
    dimension: number | undefined;
    allowPrecomputedVectors: boolean;
  }>;

  /** The distinct pipelines of these knowledge bases (`default` when there are none). */
  abstract pipelinesOf(
    trx: Trx,
    tenantId: TenantId,
    knowledgeBaseIds: string[],
  ): Promise<Pipeline[]>;
}
