import { randomUUID } from 'node:crypto';

import { toIndexSpace } from '@kb/contracts';

import { PgVectorStore } from '../src';
import { DIM, vectorStoreConformance } from './support/conformance';

jest.setTimeout(60_000);

/** The pgvector database from `npm run infra:up` (the extension built into the local Postgres). */
describe('PgVectorStore', () => {
  const store = new PgVectorStore({ url: process.env['VECTOR_DATABASE_URL']! });
  beforeAll(() => store.ensureReady(DIM));
  afterAll(() => store.close());

  vectorStoreConformance(() => store);

  it('neither reads nor sends the texts of a query that asks for none', async () => {
    const space = toIndexSpace(`t-${randomUUID().slice(0, 8)}`);
    const documentId = randomUUID();
    await store.upsert(space, [
      {
        documentId,
        documentVersion: 1,
        chunkIndex: 0,
        vector: Array.from({ length: DIM }, (_, i) => (i === 0 ? 1 : 0)),
        title: 'Title',
        text: 'Some text',
        startOffset: 0,
        endOffset: 9,
        attributes: { knowledgeBaseIds: [], tags: [], metadata: {}, uploadedAt: 0, principals: [] },
      },
    ]);
    const vector = Array.from({ length: DIM }, (_, i) => (i === 0 ? 1 : 0));
    const [withText] = await store.query(space, { vector, topK: 1 });
    const [without] = await store.query(space, { vector, topK: 1, withText: false });
    expect(withText).toMatchObject({ title: 'Title', text: 'Some text' });
    expect(without).toEqual({ ...withText, title: '', text: '' });
    await store.deleteDocuments(space, [documentId]);
  });
});
