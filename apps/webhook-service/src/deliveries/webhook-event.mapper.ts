import { createHash } from 'node:crypto';

import type { TopicEnvelope, Topics, WebhookEventData, WebhookEventType } from '@kb/contracts';

/** One event owed to the tenant's subscriptions of its type. */
export interface WebhookEvent<T extends WebhookEventType = WebhookEventType> {
  type: T;
  /**
   * The Standard Webhooks message id (`webhook-id`), derived from what identifies the event, so a
   * Kafka redelivery or a repeated status maps to the same id and is delivered once.
   */
  messageId: string;
  occurredAt: string;
  data: WebhookEventData<T>;
}

/** `msg_` and 32 hex digits of SHA-256 over what makes the event unique. */
export const messageIdOf = (...parts: Array<string | number>): string =>
  `msg_${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32)}`;

function event<T extends WebhookEventType>(
  type: T,
  occurredAt: string,
  key: Array<string | number>,
  data: WebhookEventData<T>,
): WebhookEvent<T> {
  return { type, messageId: messageIdOf(type, ...key), occurredAt, data };
}

/**
 * `kb.document.status.v1` → `document.indexed` or `document.failed`, once per document version;
 * every other status is progress inside the pipeline and is not delivered.
 */
export function fromDocumentStatus(
  envelope: TopicEnvelope<typeof Topics.documentStatus>,
): WebhookEvent | undefined {
  const { tenantId, occurredAt, payload } = envelope;
  const key = [tenantId, payload.documentId, payload.version];
  if (payload.status === 'indexed') {
    return event('document.indexed', occurredAt, key, {
      documentId: payload.documentId,
      version: payload.version,
      chunkCount: payload.chunkCount ?? null,
    });
  }
  if (payload.status === 'failed') {
    // The reason only: a failure's detail may name internals (ADR 17).
    return event('document.failed', occurredAt, key, {
      documentId: payload.documentId,
      version: payload.version,
      reason: payload.reason ?? null,
    });
  }
  return undefined;
}

/**
 * `kb.document.v1` → `document.updated` (a new version's upload: `content`; tags, metadata or
 * knowledge bases: `attributes`; readers: `acl`) and `document.deleted`. A first version is not
 * an update (its `document.indexed` tells when it is searchable); access snapshots are
 * reconciliation traffic, not changes.
 */
export function fromDocumentEvent(
  envelope: TopicEnvelope<typeof Topics.document>,
): WebhookEvent | undefined {
  const { tenantId, occurredAt, payload } = envelope;
  switch (payload.kind) {
    case 'uploaded':
      if (payload.version < 2) return undefined;
      return event(
        'document.updated',
        occurredAt,
        [tenantId, payload.documentId, 'content', payload.version],
        {
          documentId: payload.documentId,
          change: 'content',
          version: payload.version,
          filename: payload.filename,
          contentType: payload.contentType,
          sizeBytes: payload.sizeBytes,
          sha256: payload.sha256,
          title: payload.title,
        },
      );
    case 'attributes_changed':
      return event(
        'document.updated',
        occurredAt,
        [tenantId, payload.documentId, 'attributes', payload.metaVersion ?? envelope.id],
        {
          documentId: payload.documentId,
          change: 'attributes',
          knowledgeBaseIds: payload.attributes.knowledgeBaseIds,
          tags: payload.attributes.tags,
          metadata: payload.attributes.metadata,
        },
      );
    case 'acl_changed':
      // Who may read it is not sent: the receiver asks the API as itself.
      return event(
        'document.updated',
        occurredAt,
        [tenantId, payload.documentId, 'acl', payload.metaVersion ?? envelope.id],
        { documentId: payload.documentId, change: 'acl' },
      );
    case 'deleted':
      return event('document.deleted', occurredAt, [tenantId, payload.documentId], {
        documentId: payload.documentId,
      });
    // Emptying or cascade-deleting a knowledge base (ADR 24): not fanned out to one
    // `document.deleted` per document. Emptying is offered once, as `knowledge_base.emptied`
    // from kb.collection.v1 (ADR 27).
    case 'documents_removed':
    case 'access_snapshot':
      return undefined;
  }
}

/** `kb.collection.v1` → `knowledge_base.emptied` and `source.synced`; deletions are not offered. */
export function fromCollectionEvent(
  envelope: TopicEnvelope<typeof Topics.collection>,
): WebhookEvent | undefined {
  const { occurredAt, payload } = envelope;
  switch (payload.kind) {
    case 'knowledge_base_emptied':
      return event('knowledge_base.emptied', occurredAt, [envelope.tenantId, payload.jobId], {
        knowledgeBaseId: payload.knowledgeBaseId,
        deletedCount: payload.deletedCount,
        jobId: payload.jobId,
      });
    case 'source_synced':
      return event('source.synced', occurredAt, [envelope.tenantId, payload.syncId], {
        sourceId: payload.sourceId,
        syncId: payload.syncId,
        knowledgeBaseId: payload.knowledgeBaseId,
        counts: payload.counts,
        startedAt: payload.startedAt,
        finishedAt: payload.finishedAt,
      });
    case 'knowledge_base_deleted':
      return undefined;
  }
}
