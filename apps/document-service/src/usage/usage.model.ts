import { z } from 'zod';

const limit = z.number().int().min(0).nullable();

/** Limits as set: null (or absent) means none at this level. */
export const quotaLimitsSchema = z.object({
  maxDocuments: limit.optional(),
  maxBytes: limit.optional(),
  maxKnowledgeBases: limit.optional(),
  maxSearchesPerDay: limit.optional(),
});
export type QuotaLimits = z.infer<typeof quotaLimitsSchema>;

/** `PUT /v1/quotas`: the tenant's limits, or a knowledge base's when it names one. */
export const setQuotasSchema = quotaLimitsSchema
  .extend({ knowledgeBaseId: z.string().min(1).max(128).optional() })
  .strict();
export type SetQuotas = z.infer<typeof setQuotasSchema>;

const effective = z.object({
  maxDocuments: z.number().int().nullable(),
  maxBytes: z.number().int().nullable(),
  maxKnowledgeBases: z.number().int().nullable(),
  maxSearchesPerDay: z.number().int().nullable(),
});
export type EffectiveQuotas = z.infer<typeof effective>;

/** The limits in force: the tenant's (its own, else the deployment's) and each knowledge base's. */
export const quotasViewSchema = z.object({
  tenant: effective,
  knowledgeBases: z.array(effective.extend({ id: z.string() })),
});
export type QuotasView = z.infer<typeof quotasViewSchema>;

const day = z.iso.date();

export const usageQuerySchema = z
  .object({
    from: day.optional(),
    to: day.optional(),
    knowledgeBaseId: z.string().min(1).optional(),
  })
  .strict();
export type UsageQuery = z.infer<typeof usageQuerySchema>;

const stored = z.object({
  documents: z.number().int(),
  bytes: z.number().int(),
  chunks: z.number().int(),
});

const activity = z.object({
  searches: z.number().int(),
  contextCalls: z.number().int(),
  reranks: z.number().int(),
  uploads: z.number().int(),
});
export type Activity = z.infer<typeof activity>;

/** `GET /v1/usage`: what the tenant stores now, and what it did day by day. */
export const usageViewSchema = z.object({
  from: day,
  to: day,
  stored: stored.extend({ knowledgeBases: z.number().int() }),
  knowledgeBases: z.array(stored.extend({ id: z.string() })),
  days: z.array(activity.extend({ day })),
  totals: activity,
});
export type UsageView = z.infer<typeof usageViewSchema>;
