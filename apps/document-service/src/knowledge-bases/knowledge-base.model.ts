import {
  type ChunkerConfig,
  chunkerConfigSchema,
  DOCUMENT_STATUSES,
  type DocumentStatus,
  type ParsingSettings,
  parsingSettingsSchema,
  type PiiMode,
  piiModeSchema,
} from '@kb/contracts';
import { z } from 'zod';

import { heldSkipSchema } from '../holds/legal-hold.model';

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

/**
 * A knowledge base's own free-form metadata (owner, purpose, links…): any JSON values under up to
 * 64 keys, at most 16 KiB as JSON. Not filtered on: it describes the collection, not documents.
 */
export const knowledgeBaseMetadataSchema = z
  .record(z.string().min(1).max(128), z.unknown())
  .refine((m) => Object.keys(m).length <= 64, 'at most 64 metadata keys')
  .refine((m) => JSON.stringify(m).length <= 16_384, 'metadata is at most 16 KiB as JSON');
export type KnowledgeBaseMetadata = Record<string, unknown>;

/** What a retention period is counted from (docs/adr/0052): upload, or the last update. */
export const RETENTION_FROM = ['uploaded', 'updated'] as const;
export type RetentionFrom = (typeof RETENTION_FROM)[number];
/** Days a document is kept (up to 100 years); null keeps it until someone deletes it. */
const retentionDays = z.number().int().min(1).max(36_500).nullable();

export const createKnowledgeBaseSchema = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, "_" or "-", at most 63'),
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000).default(''),
    /**
     * How its documents are chunked (recursive, sentence, paragraph, markdown or token); fixed
     * once created. Absent: the deployment's default chunker (CHUNK_SIZE, CHUNK_OVERLAP).
     */
    chunker: chunkerConfigSchema.optional(),
    embeddingModel: z.string().min(1).max(200).optional(),
    tagRule: tagRuleSchema.default({ anyOf: [] }),
    metadata: knowledgeBaseMetadataSchema.default({}),
    /**
     * Whether `POST /v1/knowledge-bases/{id}/chunks` takes the client's own vectors (ADR 33):
     * false by default; only a tenant admin may turn it on.
     */
    allowPrecomputedVectors: z.boolean().default(false),
    /**
     * Whether `/v1/context` over this knowledge base reranks with the cross-encoder when the call
     * does not say (docs/adr/0047): false by default.
     */
    contextRerank: z.boolean().default(false),
    /**
     * Retention (docs/adr/0052): its documents are deleted `retentionDays` after `retentionFrom`
     * (upload or last update) by the scheduled retention run, unless held; tenant admins only.
     */
    retentionDays: retentionDays.optional(),
    retentionFrom: z.enum(RETENTION_FROM).optional(),
    /**
     * Personal data and secrets in its documents (docs/adr/0051): `off` (default), `detect`
     * (counted on the document and in metrics), `redact` (replaced by placeholders before
     * chunking and embedding) or `block` (the document fails `pii_blocked`).
     */
    pii: piiModeSchema.default('off'),
    /**
     * How its documents are read (docs/adr/0050): OCR on or off, OCR's languages, spreadsheet
     * rows as records or text; fixed once created. Absent: the defaults (OCR on in the
     * deployment's languages, records).
     */
    parsing: parsingSettingsSchema.optional(),
  })
  .strict();
export type CreateKnowledgeBase = Omit<
  z.infer<typeof createKnowledgeBaseSchema>,
  | 'metadata'
  | 'allowPrecomputedVectors'
  | 'contextRerank'
  | 'pii'
  | 'retentionDays'
  | 'retentionFrom'
> & {
  retentionDays?: number | null | undefined;
  retentionFrom?: RetentionFrom | undefined;
  /** Absent: `{}`. */
  metadata?: KnowledgeBaseMetadata;
  /** Absent: false. */
  allowPrecomputedVectors?: boolean;
  /** Absent: false. */
  contextRerank?: boolean;
  /** Absent: `off`. */
  pii?: PiiMode;
};

/** `chunker` and `embeddingModel` are accepted only to answer 409 when they differ. */
export const updateKnowledgeBaseSchema = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(2000).optional(),
    chunker: z.unknown().optional(),
    embeddingModel: z.unknown().optional(),
    tagRule: tagRuleSchema.optional(),
    /** Merged into the current map (`?merge=true`, the default; a null value removes its key) or replacing it. */
    metadata: z.record(z.string().min(1).max(128), z.unknown()).optional(),
    /** Turning it on takes a tenant admin (403 `permission_denied`); off, anyone who may write. */
    allowPrecomputedVectors: z.boolean().optional(),
    contextRerank: z.boolean().optional(),
    /** null ends the policy; setting or changing it takes a tenant admin. */
    retentionDays: retentionDays.optional(),
    retentionFrom: z.enum(RETENTION_FROM).optional(),
    /** Applies to versions parsed from then on; documents already indexed keep their text. */
    pii: piiModeSchema.optional(),
  })
  .strict();
export type UpdateKnowledgeBase = z.infer<typeof updateKnowledgeBaseSchema>;

/** `PATCH /v1/knowledge-bases/{id}?merge=true|false`. */
export const updateQuerySchema = z
  .object({ merge: z.enum(['true', 'false']).default('true') })
  .strict()
  .transform(({ merge }) => ({ merge: merge === 'true' }));

/** `GET /v1/knowledge-bases`: a page by id, by `cursor` (the previous page's) or by `offset`. */
export const listKnowledgeBasesQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(1000).default(100),
    cursor: z.string().max(200).optional(),
    offset: z.coerce.number().int().min(0).max(1_000_000).optional(),
    /** Case-insensitive part of the name or id. */
    name: z.string().trim().min(1).max(200).optional(),
    /** `false` leaves out the per-knowledge-base counts (cheaper). */
    stats: z.enum(['true', 'false']).default('true'),
  })
  .strict()
  .refine((q) => !(q.cursor && q.offset !== undefined), 'give cursor or offset, not both');
export type ListKnowledgeBasesQuery = z.infer<typeof listKnowledgeBasesQuerySchema>;

/** `indexing` while a document is in the pipeline, else `error` when one failed, else `active`. */
export type KnowledgeBaseStatus = 'indexing' | 'active' | 'error';

/** What a knowledge base holds, counted over the documents the caller may read. */
export interface KnowledgeBaseStats {
  status: KnowledgeBaseStatus;
  documentCount: number;
  /** Every document status, 0 when none has it. */
  documentsByStatus: Record<DocumentStatus, number>;
  chunkCount: number;
  /** The originals' sizes. */
  bytes: number;
  /** When its most recently indexed document became searchable; null when none has. */
  lastIndexedAt: string | null;
  /** `readable`: only documents the caller may read are counted; `all` for a tenant admin. */
  scope: 'readable' | 'all';
}

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
  metadata: KnowledgeBaseMetadata;
  /** Takes pre-computed vectors (ADR 33); set by a tenant admin, false by default. */
  allowPrecomputedVectors: boolean;
  /** Context calls rerank by default (docs/adr/0047). */
  contextRerank: boolean;
  /** Retention (docs/adr/0052): null keeps documents until deleted. */
  retentionDays: number | null;
  retentionFrom: RetentionFrom;
  /** What the parser does about personal data and secrets (docs/adr/0051). */
  pii: PiiMode;
  /** How its documents are read, fixed at creation (docs/adr/0050); the defaults when unset. */
  parsing: ParsingSettings;
  createdAt: string;
  updatedAt: string;
}

export interface KnowledgeBasePage {
  items: Array<KnowledgeBaseView & { stats?: KnowledgeBaseStats }>;
  /** Knowledge bases matching `name` (all of the tenant's without it). */
  total: number;
  /** For the next page; null on the last one (and with `offset`, which pages by offset). */
  nextCursor: string | null;
}

/** A knowledge base as the API shows it (`KnowledgeBaseView`), for the OpenAPI document. */
export const knowledgeBaseViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  chunker: chunkerConfigSchema,
  embeddingModel: z.string(),
  embeddingDimension: z.number().int().nullable(),
  tagRule: z.object({ anyOf: z.array(z.string()) }),
  metadata: z.record(z.string(), z.unknown()),
  allowPrecomputedVectors: z.boolean(),
  contextRerank: z.boolean(),
  retentionDays: z.number().int().nullable(),
  retentionFrom: z.enum(RETENTION_FROM),
  pii: piiModeSchema,
  parsing: parsingSettingsSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const knowledgeBaseStatsSchema = z.object({
  status: z
    .enum(['indexing', 'active', 'error'])
    .describe(
      'indexing while a document is in the pipeline, else error when one failed, else active',
    ),
  documentCount: z.number().int(),
  documentsByStatus: z.record(z.enum(DOCUMENT_STATUSES), z.number().int()),
  chunkCount: z.number().int(),
  bytes: z.number().int(),
  lastIndexedAt: z.string().nullable(),
  scope: z.enum(['readable', 'all']),
});

export const knowledgeBasePageSchema = z.object({
  items: z.array(knowledgeBaseViewSchema.extend({ stats: knowledgeBaseStatsSchema.optional() })),
  total: z.number().int(),
  nextCursor: z.string().nullable(),
});

/** Distinct values of a metadata key (or tags), with counts. */
export const metadataValuesSchema = z.object({
  knowledgeBaseId: z.string(),
  field: z.string(),
  values: z.array(
    z.object({
      value: z.union([z.string(), z.number(), z.boolean()]),
      count: z.number().int(),
    }),
  ),
  truncated: z.boolean(),
});

/** What emptying a knowledge base did. */
export const emptyResultSchema = z.object({
  jobId: z.uuid(),
  knowledgeBaseId: z.string(),
  status: z.literal('completed'),
  deletedCount: z.number().int(),
  unlinkedCount: z.number().int(),
  retainedCount: z.number().int(),
  indexRemoval: z.literal('scheduled'),
  tookMs: z.number().int(),
  /** Documents left in place (deleted and unlinked neither) because a legal hold covers them. */
  held: heldSkipSchema.optional(),
});

/** What deleting a knowledge base did. */
export const deleteKnowledgeBaseResultSchema = z.object({
  id: z.string(),
  cascade: z.boolean(),
  deletedCount: z.number().int(),
  unlinkedCount: z.number().int(),
  indexRemoval: z.literal('scheduled'),
  /** Documents not deleted with it (`cascade`) because a legal hold covers them: they were unlinked. */
  held: heldSkipSchema.optional(),
});

// The view is a TypeScript interface; this line stops the schema drifting from it.
const knowledgeBaseMatches: z.input<typeof knowledgeBaseViewSchema> = {} as KnowledgeBaseView;
void knowledgeBaseMatches;
