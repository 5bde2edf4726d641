import { z } from 'zod';

import { syncCountsSchema } from './events/collection.events';
import { failureReasonSchema } from './events/document.events';

/**
 * What webhook-service delivers to a tenant's receivers (docs/adr/0027). A receiver gets a JSON
 * body `{ type, timestamp, data }` signed the Standard Webhooks way; `data` is one of the shapes
 * below, by `type`. Shared here so the CLI, tests and receivers written in TypeScript read the
 * same contract the service writes.
 */
export const WEBHOOK_EVENT_TYPES = [
  'document.indexed',
  'document.updated',
  'document.deleted',
  'document.failed',
  'knowledge_base.emptied',
  'source.synced',
] as const;
export const webhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof webhookEventTypeSchema>;

/** Sent by `POST /v1/webhooks/{id}/test` only; a subscription cannot ask for it. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

export const webhookEventDataSchemas = {
  /** Every pipeline of this version is indexed: the version is searchable. */
  'document.indexed': z.object({
    documentId: z.uuid(),
    version: z.number().int().positive(),
    chunkCount: z.number().int().nonnegative().nullable(),
  }),
  /** The version ended failed, with the machine-readable reason. */
  'document.failed': z.object({
    documentId: z.uuid(),
    version: z.number().int().positive(),
    reason: failureReasonSchema.nullable(),
  }),
  /**
   * `content`: a new version was uploaded (it is indexed later: `document.indexed` follows);
   * `attributes`: tags, metadata or knowledge bases changed; `acl`: who may read it changed.
   */
  'document.updated': z.discriminatedUnion('change', [
    z.object({
      documentId: z.uuid(),
      change: z.literal('content'),
      version: z.number().int().positive(),
      filename: z.string(),
      contentType: z.string(),
      sizeBytes: z.number().int().nonnegative(),
      sha256: z.string(),
      title: z.string(),
    }),
    z.object({
      documentId: z.uuid(),
      change: z.literal('attributes'),
      knowledgeBaseIds: z.array(z.string()),
      tags: z.array(z.string()),
      metadata: z.record(z.string(), z.unknown()),
    }),
    z.object({ documentId: z.uuid(), change: z.literal('acl') }),
  ]),
  'document.deleted': z.object({ documentId: z.uuid() }),
  'knowledge_base.emptied': z.object({
    knowledgeBaseId: z.string().min(1),
    deletedCount: z.number().int().nonnegative(),
    jobId: z.uuid(),
  }),
  'source.synced': z.object({
    sourceId: z.uuid(),
    syncId: z.uuid(),
    knowledgeBaseId: z.string().min(1),
    counts: syncCountsSchema,
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime(),
  }),
} satisfies Record<WebhookEventType, z.ZodType>;

export type WebhookEventData<T extends WebhookEventType> = z.infer<
  (typeof webhookEventDataSchemas)[T]
>;

/** The body of one delivery (the `webhook-id` header carries the message id). */
export interface WebhookPayload<T extends string = string> {
  type: T;
  /** When the event happened (the Kafka envelope's `occurredAt`), ISO 8601. */
  timestamp: string;
  data: unknown;
}
