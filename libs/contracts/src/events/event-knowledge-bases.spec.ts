import { randomUUID } from 'node:crypto';

import { eventKnowledgeBases } from './event-knowledge-bases';
import { parseEnvelope, Topics } from './topics';

const tenantId = 'acme';
const envelope = (topic: (typeof Topics)[keyof typeof Topics], payload: unknown) =>
  parseEnvelope(topic, {
    id: randomUUID(),
    type: 'spec',
    schemaVersion: 1,
    occurredAt: new Date().toISOString(),
    tenantId,
    payload,
  });

const pipeline = (knowledgeBaseIds: string[]) => ({
  key: 'abcdefabcdef',
  model: 'm',
  space: 'acme',
  knowledgeBaseIds,
  versionSpaces: ['acme'],
});

describe('eventKnowledgeBases', () => {
  const documentId = randomUUID();

  it("names the pipeline's knowledge bases for parsed chunks, the document's when it has none", () => {
    const parsed = (pipelineKbs: string[]) =>
      envelope(Topics.documentParsed, {
        documentId,
        version: 1,
        title: 't',
        chunkCount: 0,
        chunks: { bucket: 'b', key: 'k' },
        attributes: { knowledgeBaseIds: ['handbook', 'legal'] },
        pipeline: pipeline(pipelineKbs),
      }).payload;
    expect(eventKnowledgeBases(parsed(['legal']))).toEqual(['legal']);
    expect(eventKnowledgeBases(parsed([]))).toEqual(['handbook', 'legal']);
  });

  it('names the one knowledge base of a batch removal and of a collection event', () => {
    const removed = envelope(Topics.document, {
      kind: 'documents_removed',
      documentIds: [documentId],
      knowledgeBaseId: 'handbook',
      cause: 'emptied',
      jobId: randomUUID(),
      batch: 0,
      batches: 1,
    }).payload;
    expect(eventKnowledgeBases(removed)).toBe('handbook');
    const emptied = envelope(Topics.collection, {
      kind: 'knowledge_base_emptied',
      knowledgeBaseId: 'legal',
      deletedCount: 0,
      jobId: randomUUID(),
    });
    expect(eventKnowledgeBases(emptied.payload)).toBe('legal');
  });

  it('names none for an event that carries none', () => {
    const status = envelope(Topics.documentStatus, { documentId, version: 1, status: 'indexed' });
    expect(eventKnowledgeBases(status.payload)).toBeUndefined();
    const deleted = envelope(Topics.document, { kind: 'deleted', documentId });
    expect(eventKnowledgeBases(deleted.payload)).toBeUndefined();
  });
});
