import type { Access } from '@kb/auth';
import {
  chunkerConfigSchema,
  type ChunkerConfig,
  type PipelineDefaults,
  type TenantId,
} from '@kb/contracts';
import { ApiError } from '@kb/http';
import { Inject, Injectable } from '@nestjs/common';
import { isDeepStrictEqual } from 'node:util';
import { sql, type Kysely, type Selectable } from 'kysely';
import { z } from 'zod';
import type { DocumentDatabase, KnowledgeBasesTable } from '../platform/db.types';
import { DocumentsRepository } from '../documents/documents.repository';
import { OutboxRelay } from '../outbox/outbox.relay';
import { MODEL_CATALOG, type ModelCatalog } from './model-catalog';
import { CLOCK, DB, type Clock } from '../platform/tokens';

/**
 * How a knowledge base's documents are chunked (recursive, sentence, paragraph, markdown or
 * token); fixed when it is created. Without a strategy, recursive; without anything, 1000/150.
 */
export const chunkerSchema = chunkerConfigSchema;

/** Documents tagged with any of `anyOf` belong to the knowledge base; `[]`, no rule. */
const tagRuleSchema = z
  .object({
    anyOf: z
      .array(
        z
          .string()
          .regex(
            /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/,
            'letters, digits, "_", ".", ":" or "-", at most 128',
          ),
      )
      .max(64),
  })
  .strict();

export const createKnowledgeBaseSchema = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, "_" or "-", at most 63'),
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000).default(''),
    /** Absent: the deployment's default chunker (CHUNK_SIZE, CHUNK_OVERLAP). */
    chunker: chunkerSchema.optional(),
    embeddingModel: z.string().min(1).max(200).optional(),
    tagRule: tagRuleSchema.default({ anyOf: [] }),
  })
  .strict();

export const updateKnowledgeBaseSchema = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(2000).optional(),
    chunker: z.unknown().optional(),
    embeddingModel: z.unknown().optional(),
    tagRule: tagRuleSchema.optional(),
  })
  .strict();

export interface KnowledgeBaseView {
  id: string;
  name: string;
  description: string;
  /** Fixed at creation: changing them means a new knowledge base. */
  chunker: ChunkerConfig;
  embeddingModel: string;
  /** The model's dimension, detected when the knowledge base was created. */
  embeddingDimension: number | null;
  /** Mutable: changing it adds and removes documents (their indexes update in place). */
  tagRule: { anyOf: string[] };
  createdAt: string;
  updatedAt: string;
}

const toView = (row: Selectable<KnowledgeBasesTable>): KnowledgeBaseView => ({
  id: row.id,
  name: row.name,
  description: row.description,
  chunker: row.chunker as KnowledgeBaseView['chunker'],
  embeddingModel: row.embedding_model,
  embeddingDimension: row.embedding_dimension,
  tagRule: { anyOf: row.tag_rule },
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
});

export { DEFAULT_KNOWLEDGE_BASE } from './pipelines';
import { DEFAULT_KNOWLEDGE_BASE } from './pipelines';

const notFound = (id: string) =>
  new ApiError(404, 'knowledge_base_not_found', `knowledge base ${id} not found`);

function requireWrite(access: Access): void {
  if (!access.documentActions.has('write')) {
    throw new ApiError(403, 'permission_denied', `write is not granted to ${access.userId}`);
  }
}

/**
 * Knowledge bases of a tenant. The pipeline a knowledge base was created with (chunker and its
 * parameters, embedding model) cannot change: vectors made another way would not be comparable,
 * so such a change is a 409 that says to create a new knowledge base.
 */
@Injectable()
export class KnowledgeBases {
  constructor(
    @Inject(DB) private readonly db: Kysely<DocumentDatabase>,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly documents: DocumentsRepository,
    private readonly outbox: OutboxRelay,
    @Inject(MODEL_CATALOG) private readonly models: ModelCatalog,
  ) {}

  async create(
    tenantId: TenantId,
    access: Access,
    input: z.infer<typeof createKnowledgeBaseSchema>,
    defaults: PipelineDefaults,
  ): Promise<KnowledgeBaseView> {
    requireWrite(access);
    const model = input.embeddingModel ?? defaults.model;
    // Detected, not declared: the model must be served, and its dimension is what it produces.
    const dimension = await this.models.dimensionOf(model);
    if (dimension === undefined) {
      throw new ApiError(
        400,
        'embedding_model_not_served',
        `embedding model "${model}" is not served by this deployment (its default is "${defaults.model}")`,
      );
    }
    const now = this.clock();
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('knowledge_bases')
        .values({
          tenant_id: tenantId,
          id: input.id,
          name: input.name,
          description: input.description,
          chunker: JSON.stringify(input.chunker ?? defaults.chunker),
          embedding_model: model,
          embedding_dimension: dimension,
          tag_rule: [...new Set(input.tagRule.anyOf)],
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!row) {
        throw new ApiError(
          409,
          'knowledge_base_exists',
          `knowledge base ${input.id} already exists`,
        );
      }
      // Documents already carrying the rule's tags join it now.
      if ((await this.documents.applyTagRules(now, { tenantId, trx })).length > 0) {
        this.outbox.wake();
      }
      return toView(row);
    });
  }

  async get(tenantId: TenantId, id: string): Promise<KnowledgeBaseView> {
    const row = await this.db
      .selectFrom('knowledge_bases')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound(id);
    return toView(row);
  }

  /**
   * The chunker a knowledge base was created with; undefined for one never created (`default`
   * before anyone creates it), whose documents get the parser's configured default.
   */
  /**
   * Refuses (400 `unknown_knowledge_base`) ids the tenant has not created; `default` always exists.
   */
  async requireExisting(tenantId: TenantId, ids: string[]): Promise<void> {
    const wanted = [...new Set(ids)].filter((id) => id !== DEFAULT_KNOWLEDGE_BASE);
    if (wanted.length === 0) return;
    const found = await this.db
      .selectFrom('knowledge_bases')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', wanted)
      .execute();
    const missing = wanted.filter((id) => !found.some((row) => row.id === id));
    if (missing.length > 0) {
      throw new ApiError(
        400,
        'unknown_knowledge_base',
        `no knowledge base ${missing.join(', ')}: create it first (POST /v1/knowledge-bases)`,
      );
    }
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

  async update(
    tenantId: TenantId,
    access: Access,
    id: string,
    input: z.infer<typeof updateKnowledgeBaseSchema>,
  ): Promise<KnowledgeBaseView> {
    requireWrite(access);
    const current = await this.get(tenantId, id);
    const requested = {
      chunker:
        input.chunker === undefined ? undefined : chunkerSchema.safeParse(input.chunker).data,
      embeddingModel: input.embeddingModel,
    };
    for (const field of ['chunker', 'embeddingModel'] as const) {
      // Sending the current value back is not a change; anything else is.
      if (input[field] !== undefined && !isDeepStrictEqual(requested[field], current[field])) {
        throw new ApiError(
          409,
          'immutable_field',
          `${field} is fixed when a knowledge base is created: create a new knowledge base with the new ${field} and move the documents to it`,
        );
      }
    }
    const now = this.clock();
    const { row, changed } = await this.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('knowledge_bases')
        .set({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.tagRule !== undefined ? { tag_rule: [...new Set(input.tagRule.anyOf)] } : {}),
          updated_at: now,
        })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw notFound(id);
      // A new rule adds and removes documents; their indexes update in place (no re-embedding).
      const changed =
        input.tagRule !== undefined
          ? await this.documents.applyTagRules(now, { tenantId, trx })
          : [];
      return { row, changed };
    });
    if (changed.length > 0) this.outbox.wake();
    return toView(row);
  }

  /** Refused (409) while documents still belong to it. */
  async delete(tenantId: TenantId, access: Access, id: string): Promise<{ id: string }> {
    requireWrite(access);
    await this.get(tenantId, id);
    const member = await this.db
      .selectFrom('documents')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where(sql<boolean>`knowledge_base_ids @> ARRAY[${id}]::text[]`)
      .limit(1)
      .executeTakeFirst();
    if (member) {
      throw new ApiError(
        409,
        'knowledge_base_not_empty',
        `knowledge base ${id} still has documents: move or delete them first`,
      );
    }
    await this.db
      .deleteFrom('knowledge_bases')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .execute();
    return { id };
  }
}
