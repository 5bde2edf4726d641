import { randomUUID } from 'node:crypto';

import { newEnvelope, type Topic, type TopicEnvelope, Topics } from '@kb/contracts';

import { eventLabels, knowledgeBaseOfBatch, knowledgeBaseOfEvent, tally } from './event-labels';

const removal = (knowledgeBaseId: string) =>
  newEnvelope('kb.document', 'acme', {
    kind: 'documents_removed' as const,
    documentIds: [randomUUID()],
    knowledgeBaseId,
    cause: 'emptied' as const,
    jobId: randomUUID(),
    batch: 0,
    batches: 1,
  }) as TopicEnvelope<Topic>;

describe('event labels', () => {
  it('label an event with the knowledge base it names, and leave one naming none unlabelled', () => {
    expect(knowledgeBaseOfEvent(removal('handbook'))).toBe('handbook');
    const status = newEnvelope('kb.document.status', 'acme', {
      documentId: randomUUID(),
      version: 1,
      status: 'indexed' as const,
    }) as TopicEnvelope<typeof Topics.documentStatus>;
    expect(knowledgeBaseOfEvent(status as TopicEnvelope<Topic>)).toBeUndefined();
    expect(eventLabels('t', 'g', undefined)).toEqual({ topic: 't', group: 'g' });
    expect(eventLabels('t', 'g', 'handbook')).toEqual({
      topic: 't',
      group: 'g',
      knowledge_base: 'handbook',
    });
  });

  it('give a batch the value its events share, else `_multiple`; count each under its own', () => {
    expect(knowledgeBaseOfBatch(['a', 'a'])).toBe('a');
    expect(knowledgeBaseOfBatch([undefined, undefined])).toBeUndefined();
    expect(knowledgeBaseOfBatch(['a', 'b'])).toBe('_multiple');
    expect(knowledgeBaseOfBatch(['a', undefined])).toBe('_multiple');
    expect([...tally(['a', 'b', 'a', undefined])]).toEqual([
      ['a', 2],
      ['b', 1],
      [undefined, 1],
    ]);
  });
});
