import { randomUUID } from 'node:crypto';

import { newEnvelope, type TopicEnvelope, Topics, webhookEventDataSchemas } from '@kb/contracts';

import { fromCollectionEvent, fromDocumentEvent, fromDocumentStatus } from './webhook-event.mapper';

const documentId = randomUUID();
const envelope = <T extends keyof typeof Topics>(_topic: T, payload: unknown, tenant = 'acme') =>
  newEnvelope('test', tenant, payload) as TopicEnvelope<(typeof Topics)[T]>;

const uploaded = (version: number) => ({
  kind: 'uploaded',
  documentId,
  version,
  filename: 'a.md',
  contentType: 'text/markdown',
  sizeBytes: 10,
  sha256: 'a'.repeat(64),
  blob: { bucket: 'b', key: 'k' },
  title: 'A',
  metadata: {},
  attributes: { knowledgeBaseIds: [], tags: [], metadata: {}, uploadedAt: 0, principals: [] },
  pipelines: [],
});

describe('Kafka events → webhook events', () => {
  it('delivers indexed and failed statuses, once per document version', () => {
    const indexed = fromDocumentStatus(
      envelope('documentStatus', { documentId, version: 2, status: 'indexed', chunkCount: 7 }),
    );
    expect(indexed).toMatchObject({
      type: 'document.indexed',
      data: { documentId, version: 2, chunkCount: 7 },
    });
    // Delivered again (Kafka redelivery, a repeated status): the same message id.
    const again = fromDocumentStatus(
      envelope('documentStatus', { documentId, version: 2, status: 'indexed', chunkCount: 7 }),
    );
    expect(again!.messageId).toBe(indexed!.messageId);
    expect(indexed!.messageId).toMatch(/^msg_[0-9a-f]{32}$/);
    const other = fromDocumentStatus(
      envelope('documentStatus', { documentId, version: 3, status: 'indexed' }),
    );
    expect(other!.messageId).not.toBe(indexed!.messageId);
    expect(other!.data).toEqual({ documentId, version: 3, chunkCount: null });
    // Another tenant's identical event is another message.
    const elsewhere = fromDocumentStatus(
      envelope('documentStatus', { documentId, version: 2, status: 'indexed' }, 'globex'),
    );
    expect(elsewhere!.messageId).not.toBe(indexed!.messageId);

    const failed = fromDocumentStatus(
      envelope('documentStatus', {
        documentId,
        version: 1,
        status: 'failed',
        reason: 'parse_error',
        detail: 'stack trace with internals',
      }),
    );
    expect(failed).toMatchObject({ type: 'document.failed' });
    expect(failed!.data).toEqual({ documentId, version: 1, reason: 'parse_error' });
  });

  it.each(['pending', 'parsing', 'embedding', 'indexing'])('does not deliver %s', (status) => {
    expect(
      fromDocumentStatus(envelope('documentStatus', { documentId, version: 1, status })),
    ).toBeUndefined();
  });

  it('delivers a new version, attribute and ACL changes as document.updated', () => {
    expect(fromDocumentEvent(envelope('document', uploaded(1)))).toBeUndefined();
    const content = fromDocumentEvent(envelope('document', uploaded(2)));
    expect(content).toMatchObject({
      type: 'document.updated',
      data: { documentId, change: 'content', version: 2, sha256: 'a'.repeat(64) },
    });
    const attributes = fromDocumentEvent(
      envelope('document', {
        kind: 'attributes_changed',
        documentId,
        attributes: { knowledgeBaseIds: ['kb'], tags: ['t'], metadata: { a: 1 } },
        spaces: ['s'],
        metaVersion: 4,
      }),
    );
    expect(attributes!.data).toEqual({
      documentId,
      change: 'attributes',
      knowledgeBaseIds: ['kb'],
      tags: ['t'],
      metadata: { a: 1 },
    });
    const acl = fromDocumentEvent(
      envelope('document', {
        kind: 'acl_changed',
        documentId,
        principals: ['u:secret'],
        metaVersion: 5,
      }),
    );
    // Who may read it stays out of the payload.
    expect(acl!.data).toEqual({ documentId, change: 'acl' });
    for (const event of [content, attributes, acl]) {
      expect(webhookEventDataSchemas['document.updated'].parse(event!.data)).toEqual(event!.data);
    }
  });

  it('delivers deletes and skips access snapshots', () => {
    expect(
      fromDocumentEvent(envelope('document', { kind: 'deleted', documentId, metaVersion: 3 })),
    ).toMatchObject({ type: 'document.deleted', data: { documentId } });
    expect(
      fromDocumentEvent(envelope('document', { kind: 'access_snapshot', documents: [] })),
    ).toBeUndefined();
  });

  it('does not fan an emptied knowledge base out into one document.deleted per document', () => {
    expect(
      fromDocumentEvent(
        envelope('document', {
          kind: 'documents_removed',
          documentIds: [documentId],
          knowledgeBaseId: 'handbook',
          cause: 'emptied',
          jobId: documentId,
          batch: 0,
          batches: 1,
        }),
      ),
    ).toBeUndefined();
  });

  it('delivers emptied knowledge bases and synced sources, not deleted knowledge bases', () => {
    const knowledgeBaseId = randomUUID();
    const jobId = randomUUID();
    const emptied = fromCollectionEvent(
      envelope('collection', {
        kind: 'knowledge_base_emptied',
        knowledgeBaseId,
        deletedCount: 3,
        jobId,
      }),
    );
    expect(emptied).toMatchObject({
      type: 'knowledge_base.emptied',
      data: { knowledgeBaseId, deletedCount: 3, jobId },
    });
    const synced = {
      kind: 'source_synced',
      sourceId: randomUUID(),
      syncId: randomUUID(),
      knowledgeBaseId,
      counts: { added: 1, updated: 2, unchanged: 3, deleted: 4, failed: 0 },
      startedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
    };
    const { kind: _kind, ...data } = synced;
    expect(fromCollectionEvent(envelope('collection', synced))).toMatchObject({
      type: 'source.synced',
      data,
    });
    expect(
      fromCollectionEvent(
        envelope('collection', {
          kind: 'knowledge_base_deleted',
          knowledgeBaseId,
          cascade: true,
          deletedCount: 1,
          unlinkedCount: 0,
        }),
      ),
    ).toBeUndefined();
  });
});
