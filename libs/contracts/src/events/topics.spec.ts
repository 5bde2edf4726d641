import { randomUUID } from 'node:crypto';

import { DOCUMENTS_REMOVED_BATCH } from './document.events';
import { newEnvelope } from './envelope';
import { deadLetterTopic, parseEnvelope, Topics } from './topics';

describe('parseEnvelope', () => {
  const documentId = randomUUID();

  it('accepts a well-formed envelope for its topic and types the payload', () => {
    const envelope = newEnvelope('kb.document.status', 't1', {
      documentId,
      version: 1,
      status: 'indexed',
      chunkCount: 2,
    });
    const parsed = parseEnvelope(Topics.documentStatus, JSON.parse(JSON.stringify(envelope)));
    expect(parsed.payload.status).toBe('indexed');
    expect(parsed).toEqual(envelope);
  });

  it('rejects a payload of another topic', () => {
    const envelope = newEnvelope('kb.document.status', 't1', {
      documentId,
      version: 1,
      status: 'indexed',
    });
    expect(() => parseEnvelope(Topics.documentParsed, envelope)).toThrow();
  });

  it('rejects unknown statuses, failure reasons and missing envelope fields', () => {
    const bad = newEnvelope('kb.document.status', 't1', { documentId, version: 1, status: 'done' });
    expect(() => parseEnvelope(Topics.documentStatus, bad)).toThrow(/status/);
    const badReason = newEnvelope('kb.document.status', 't1', {
      documentId,
      version: 1,
      status: 'failed',
      reason: 'oops',
    });
    expect(() => parseEnvelope(Topics.documentStatus, badReason)).toThrow(/reason/);
    const { tenantId: _omitted, ...noTenant } = newEnvelope('kb.document.status', 't1', {
      documentId,
      version: 1,
      status: 'parsing',
    });
    expect(() => parseEnvelope(Topics.documentStatus, noTenant)).toThrow(/tenantId/);
  });

  it('discriminates document events by kind', () => {
    const deleted = newEnvelope('kb.document', 't1', { kind: 'deleted', documentId });
    expect(parseEnvelope(Topics.document, deleted).payload.kind).toBe('deleted');
    expect(() =>
      parseEnvelope(
        Topics.document,
        newEnvelope('kb.document', 't1', { kind: 'renamed', documentId }),
      ),
    ).toThrow();
  });

  it('carries at most 1,000 document ids in one documents_removed event', () => {
    const removed = (documentIds: string[]) =>
      newEnvelope('kb.document', 't1', {
        kind: 'documents_removed',
        documentIds,
        knowledgeBaseId: 'handbook',
        cause: 'emptied',
        jobId: documentId,
        batch: 0,
        batches: 1,
      });
    const ids = Array.from({ length: DOCUMENTS_REMOVED_BATCH }, () => randomUUID());
    const parsed = parseEnvelope(Topics.document, removed(ids)).payload;
    expect(parsed.kind === 'documents_removed' && parsed.documentIds).toHaveLength(1000);
    // Well under Kafka's 1 MB default message size.
    expect(JSON.stringify(removed(ids)).length).toBeLessThan(60_000);
    expect(() => parseEnvelope(Topics.document, removed([...ids, randomUUID()]))).toThrow();
    expect(() => parseEnvelope(Topics.document, removed([]))).toThrow();
    expect(() => parseEnvelope(Topics.document, removed(['not-a-uuid']))).toThrow();
  });

  it('names a dead-letter topic per consumer group', () => {
    expect(deadLetterTopic('parser-service')).toBe('kb.dlq.parser-service.v1');
  });
});

describe('kb.collection.v1', () => {
  it('discriminates collection events by kind and refuses negative counts', () => {
    const knowledgeBaseId = randomUUID();
    const emptied = newEnvelope('kb.collection', 't1', {
      kind: 'knowledge_base_emptied',
      knowledgeBaseId,
      deletedCount: 3,
      jobId: randomUUID(),
    });
    expect(parseEnvelope(Topics.collection, emptied).payload.kind).toBe('knowledge_base_emptied');
    const synced = newEnvelope('kb.collection', 't1', {
      kind: 'source_synced',
      sourceId: randomUUID(),
      syncId: randomUUID(),
      knowledgeBaseId,
      counts: { added: 1, updated: 0, unchanged: 2, deleted: -1, failed: 0 },
      startedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
    });
    expect(() => parseEnvelope(Topics.collection, synced)).toThrow(/deleted/);
  });
});
