import { z } from 'zod';

/**
 * `POST /v1/erasures` (docs/adr/0052): everything a user uploaded (`uploadedBy`, the owner's user
 * id), everything a listing filter matches (`where`, as in `GET /v1/documents?where=`), or the
 * documents of that user matching the filter.
 */
export const requestErasureSchema = z
  .object({
    uploadedBy: z.string().min(1).max(200).optional(),
    where: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .refine((e) => e.uploadedBy !== undefined || e.where !== undefined, {
    message: 'give uploadedBy, where, or both',
  });
export type RequestErasure = z.infer<typeof requestErasureSchema>;

export const ERASURE_STATUSES = ['running', 'succeeded', 'failed'] as const;
export type ErasureStatus = (typeof ERASURE_STATUSES)[number];

/** An erasure job as stored. */
export interface ErasureRecord {
  id: string;
  tenantId: string;
  requestedBy: string;
  ownerId: string | null;
  where: string | null;
  status: ErasureStatus;
  deleted: number;
  held: number;
  error: string | null;
  startedAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export const erasureViewSchema = z.object({
  id: z.uuid(),
  status: z.enum(ERASURE_STATUSES),
  uploadedBy: z.string().optional(),
  where: z.record(z.string(), z.unknown()).optional(),
  requestedBy: z.string(),
  /** Deleted so far. */
  deleted: z.number().int(),
  /** Matched but kept by a legal hold (counted when the job ends). */
  held: z.number().int(),
  heldReason: z.literal('legal_hold').optional(),
  error: z.string().optional(),
  startedAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().optional(),
});
export type ErasureView = z.infer<typeof erasureViewSchema>;

export const toErasureView = (job: ErasureRecord): ErasureView => ({
  id: job.id,
  status: job.status,
  ...(job.ownerId !== null ? { uploadedBy: job.ownerId } : {}),
  ...(job.where !== null ? { where: JSON.parse(job.where) as Record<string, unknown> } : {}),
  requestedBy: job.requestedBy,
  deleted: job.deleted,
  held: job.held,
  ...(job.held > 0 ? { heldReason: 'legal_hold' as const } : {}),
  ...(job.error !== null ? { error: job.error } : {}),
  startedAt: job.startedAt.toISOString(),
  updatedAt: job.updatedAt.toISOString(),
  ...(job.finishedAt ? { finishedAt: job.finishedAt.toISOString() } : {}),
});
