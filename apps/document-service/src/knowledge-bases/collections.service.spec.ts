import { Topics } from '@kb/contracts';
import { ErrorKind } from '@kb/errors';

import {
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../testing/document-service.fixture';
import { statsOf } from './collections.service';
import { createKnowledgeBaseSchema, listKnowledgeBasesQuerySchema } from './knowledge-base.model';

const files = spool();
afterAll(() => files.cleanup());

describe('statsOf', () => {
  const row = (status: 'pending' | 'indexed' | 'failed', documents: number) => ({
    knowledgeBaseId: 'kb',
    status,
    documents,
    chunks: documents * 2,
    bytes: documents * 10,
    lastIndexedAt: status === 'indexed' ? '2026-11-22T10:00:00.000Z' : null,
  });

  it('is indexing while a document is in the pipeline, else error when one failed', () => {
    expect(statsOf([row('pending', 1), row('failed', 1)], 'all').status).toBe('indexing');
    expect(statsOf([row('indexed', 2), row('failed', 1)], 'all')).toMatchObject({
      status: 'error',
      documentCount: 3,
      chunkCount: 6,
      bytes: 30,
      lastIndexedAt: '2026-11-22T10:00:00.000Z',
    });
    expect(statsOf([], 'readable')).toMatchObject({ status: 'active', documentCount: 0 });
  });
});

describe('CollectionsService', () => {
  let f: DocumentServiceFixture;
  const alice = newAccess();
  const bob = newAccess({ userId: 'bob' });
  const list = (query: Record<string, string> = {}) =>
    f.collections.list(TENANT, alice, listKnowledgeBasesQuerySchema.parse(query));

  beforeEach(async () => {
    f = documentServiceFixture();
    for (const id of ['a', 'b', 'c']) {
      await f.knowledgeBases.create(
        TENANT,
        alice,
        createKnowledgeBaseSchema.parse({ id, name: id }),
      );
    }
  });

  it('pages knowledge bases by id with a cursor, counting only what the caller reads', async () => {
    await f.documents.upload(TENANT, alice, files.file('mine'), { knowledgeBaseIds: ['a'] });
    await f.documents.upload(TENANT, bob, files.file('bob’s'), { knowledgeBaseIds: ['a'] });
    const first = await list({ limit: '2' });
    expect(first.items.map((kb) => kb.id)).toEqual(['a', 'b']);
    expect(first.items[0]!.stats).toMatchObject({ documentCount: 1, scope: 'readable' });
    const second = await list({ limit: '2', cursor: first.nextCursor! });
    expect(second.items.map((kb) => kb.id)).toEqual(['c']);
    expect(second.nextCursor).toBeNull();
    // Counts are a read of the documents: audited.
    const audited = f.outbox
      .envelopes(Topics.audit)
      .filter((e) => e.payload.action === 'documents_listed');
    expect(audited).toHaveLength(2);
    expect((await list({ stats: 'false' })).items[0]).not.toHaveProperty('stats');
  });

  it('answers the distinct values of a field, truncated at the limit', async () => {
    for (const team of ['x', 'x', 'y', 'z']) {
      await f.documents.upload(TENANT, alice, files.file(`team ${team} ${Math.random()}`), {
        knowledgeBaseIds: ['b'],
        metadata: { team },
      });
    }
    const values = await f.collections.metadataValues(
      TENANT,
      alice,
      'b',
      { kind: 'metadata', key: 'team' },
      2,
    );
    expect(values).toMatchObject({ knowledgeBaseId: 'b', field: 'metadata.team', truncated: true });
    expect(values.values).toHaveLength(2);
    expect(values.values[0]).toEqual({ value: 'x', count: 2 });
    await expect(
      f.collections.metadataValues(TENANT, alice, 'nope', { kind: 'tags' }, 5),
    ).rejects.toMatchObject({ kind: ErrorKind.NotFound });
  });
});
