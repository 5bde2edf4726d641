import { webhookEventTypeSchema } from '@kb/contracts';
import { z } from 'zod';

/** `POST /v1/webhooks`: where, which events, and optionally the signing secret (else generated). */
export const createWebhookSchema = z.strictObject({
  url: z.string().min(1).max(2048),
  events: z
    .array(webhookEventTypeSchema)
    .min(1)
    .refine((events) => new Set(events).size === events.length, 'events must not repeat'),
  /** `whsec_` + base64 of 24 to 64 random bytes (Standard Webhooks); generated when absent. */
  secret: z.string().max(200).optional(),
  description: z.string().max(500).default(''),
});
export type CreateWebhook = z.infer<typeof createWebhookSchema>;

/** `PATCH /v1/webhooks/{id}`: re-enable a disabled subscription (its failure count restarts). */
export const updateWebhookSchema = z.strictObject({
  enabled: z.boolean().optional(),
  events: createWebhookSchema.shape.events.optional(),
  description: z.string().max(500).optional(),
});
export type UpdateWebhook = z.infer<typeof updateWebhookSchema>;

/** The longest a replaced secret may keep signing: a week. */
export const MAX_ROTATION_GRACE_SECONDS = 7 * 86_400;

/**
 * `POST /v1/webhooks/{id}/rotate-secret`: a new signing secret (generated unless given). The old
 * one keeps signing beside it for `graceSeconds` (default a day; 0 ends it at once), so a receiver
 * can switch to the new secret without refusing a message in between.
 */
export const rotateSecretSchema = z.strictObject({
  secret: createWebhookSchema.shape.secret,
  graceSeconds: z.number().int().min(0).max(MAX_ROTATION_GRACE_SECONDS).default(86_400),
});
export type RotateSecret = z.infer<typeof rotateSecretSchema>;

export const rotatedSecretSchema = z.object({
  id: z.uuid(),
  /** The new secret, shown this once. */
  secret: z.string(),
  /** Until when the previous secret also signs; null when it stopped at once. */
  previousSecretExpiresAt: z.string().nullable(),
  rotatedAt: z.string(),
});
export type RotatedSecret = z.infer<typeof rotatedSecretSchema>;

export const deliveriesQuerySchema = z.object({
  status: z.enum(['pending', 'succeeded', 'failed']).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
export type DeliveriesQuery = z.infer<typeof deliveriesQuerySchema>;

export const webhookIdSchema = z.uuid();

export const webhookViewSchema = z.object({
  id: z.uuid(),
  url: z.string(),
  events: z.array(webhookEventTypeSchema),
  description: z.string(),
  enabled: z.boolean(),
  /** Why it was disabled (after repeated failure), when it is. */
  disabledReason: z.string().nullable(),
  disabledAt: z.string().nullable(),
  /** Failed tries in a row; a success resets it. */
  consecutiveFailures: z.number().int(),
  /** When the signing secret was last rotated (null: never). */
  secretRotatedAt: z.string().nullable(),
  /** While set and in the future, the secret before the last rotation also signs. */
  previousSecretExpiresAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type WebhookView = z.infer<typeof webhookViewSchema>;

/** What creating answers: the view and, this once, the signing secret. */
export const createdWebhookSchema = webhookViewSchema.extend({ secret: z.string() });
export type CreatedWebhook = z.infer<typeof createdWebhookSchema>;

export const attemptViewSchema = z.object({
  attempt: z.number().int().min(1),
  at: z.string(),
  succeeded: z.boolean(),
  /** The receiver's HTTP status; null when no answer came (refused, timed out, blocked). */
  statusCode: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int().nonnegative(),
});
export type AttemptView = z.infer<typeof attemptViewSchema>;

export const deliveryStatusSchema = z.enum(['pending', 'succeeded', 'failed']);
export type DeliveryStatus = z.infer<typeof deliveryStatusSchema>;

export const deliveryViewSchema = z.object({
  id: z.uuid(),
  /** The `webhook-id` header: the same on every try of this delivery. */
  messageId: z.string(),
  eventType: z.string(),
  status: deliveryStatusSchema,
  attemptCount: z.number().int().nonnegative(),
  /** When the next try is due (pending deliveries). */
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Oldest first. */
  attempts: z.array(attemptViewSchema),
});
export type DeliveryView = z.infer<typeof deliveryViewSchema>;
