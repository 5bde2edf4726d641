import { z } from 'zod';

import { RETENTION_FROM } from '../knowledge-bases/knowledge-base.model';

/** `GET /v1/knowledge-bases/{id}/retention/preview?limit=`. */
export const retentionPreviewQuerySchema = z
  .object({ limit: z.coerce.number().int().min(1).max(1000).default(100) })
  .strict();

const dueDocument = z.object({ id: z.uuid(), title: z.string(), dueAt: z.string() });

/** What retention would delete from a knowledge base now, and what legal holds keep. */
export const retentionPreviewSchema = z.object({
  knowledgeBaseId: z.string(),
  retentionDays: z.number().int().nullable(),
  retentionFrom: z.enum(RETENTION_FROM),
  /** The time the preview was computed at. */
  asOf: z.string(),
  /** Due and not held: the next runs delete these (a run takes up to 200 a tenant). */
  deletes: z.array(dueDocument),
  /** Due, but a legal hold covers them: retention skips them while it is active. */
  held: z.array(dueDocument.extend({ hold: z.string(), reason: z.literal('legal_hold') })),
  /** More documents are due than `limit` showed. */
  truncated: z.boolean(),
});
export type RetentionPreview = z.infer<typeof retentionPreviewSchema>;
