import { z } from 'zod';

/**
 * `kb.collection.v1` carries what happens to collections as a whole, keyed by the knowledge base
 * (or source) id: a knowledge base emptied or deleted, a source synced. Webhooks and other systems
 * follow these; per-document events stay on `kb.document.v1` and `kb.document.status.v1`.
 */
/** A knowledge base's id: the tenant's own slug (`handbook`, `default`), not a UUID. */
const knowledgeBaseIdSchema = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/);

export const knowledgeBaseEmptiedSchema = z.object({
  knowledgeBaseId: knowledgeBaseIdSchema,
  /** Documents removed from the knowledge base (deleted, or unlinked when they belong elsewhere). */
  deletedCount: z.number().int().nonnegative(),
  /** The emptying job, so a receiver can correlate it with the REST answer. */
  jobId: z.uuid(),
});
export type KnowledgeBaseEmptied = z.infer<typeof knowledgeBaseEmptiedSchema>;

export const knowledgeBaseDeletedSchema = z.object({
  knowledgeBaseId: knowledgeBaseIdSchema,
  cascade: z.boolean(),
  deletedCount: z.number().int().nonnegative(),
  unlinkedCount: z.number().int().nonnegative(),
});
export type KnowledgeBaseDeleted = z.infer<typeof knowledgeBaseDeletedSchema>;

export const syncCountsSchema = z.object({
  added: z.number().int().nonnegative(),
  updated: z.number().int().nonnegative(),
  unchanged: z.number().int().nonnegative(),
  deleted: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
});
export type SyncCounts = z.infer<typeof syncCountsSchema>;

export const sourceSyncedSchema = z.object({
  sourceId: z.uuid(),
  syncId: z.uuid(),
  knowledgeBaseId: knowledgeBaseIdSchema,
  counts: syncCountsSchema,
  startedAt: z.iso.datetime(),
  finishedAt: z.iso.datetime(),
});
export type SourceSynced = z.infer<typeof sourceSyncedSchema>;

export const collectionEventSchema = z.discriminatedUnion('kind', [
  knowledgeBaseEmptiedSchema.extend({ kind: z.literal('knowledge_base_emptied') }),
  knowledgeBaseDeletedSchema.extend({ kind: z.literal('knowledge_base_deleted') }),
  sourceSyncedSchema.extend({ kind: z.literal('source_synced') }),
]);
export type CollectionEvent = z.infer<typeof collectionEventSchema>;
