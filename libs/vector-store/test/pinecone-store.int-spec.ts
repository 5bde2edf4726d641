import { randomUUID } from 'node:crypto';

import { parseFilter, toIndexSpace } from '@kb/contracts';

import { PineconeStore } from '../src';
import { vectorStoreConformance } from './support/conformance';
import { FakePineconeDataPlane } from './support/fake-pinecone';

jest.setTimeout(60_000);

describe('PineconeStore against the FAKE Pinecone data plane', () => {
  const fake = new FakePineconeDataPlane();
  let store: PineconeStore;

  beforeAll(async () => {
    store = new PineconeStore({ apiKey: 'fake-key', indexHost: await fake.start() });
  });
  afterAll(() => fake.stop());

  vectorStoreConformance(() => store);

  it('deletes many documents in calls of at most 1,000 ids (Pinecone refuses more)', async () => {
    const space = toIndexSpace(`bulk-${randomUUID().slice(0, 8)}`);
    const docs = [randomUUID(), randomUUID(), randomUUID()];
    const attributes = {
      knowledgeBaseIds: ['kb'],
      tags: [],
      metadata: {},
      uploadedAt: 0,
      principals: ['u:owner'],
    };
    await store.upsert(
      space,
      docs.flatMap((documentId) =>
        Array.from({ length: 700 }, (_, chunkIndex) => ({
          documentId,
          documentVersion: 1,
          chunkIndex,
          vector: [1, 0, 0, 0, 0, 0, 0, chunkIndex / 700],
          title: 't',
          text: `chunk ${chunkIndex}`,
          startOffset: 0,
          endOffset: 1,
          attributes,
        })),
      ),
    );
    fake.deleteCalls.length = 0;
    expect(await store.deleteDocuments(space, docs)).toBe(2100);
    expect(fake.deleteCalls.reduce((a, b) => a + b, 0)).toBe(2100);
    expect(Math.max(...fake.deleteCalls)).toBeLessThanOrEqual(1000);
    expect(fake.deleteCalls.length).toBeGreaterThanOrEqual(3);
    for (const doc of docs) expect(await store.countDocument(space, doc)).toBe(0);
  });

  it('never writes back principals an eventually consistent fetch read (review M8)', async () => {
    const space = toIndexSpace(`m8-${randomUUID().slice(0, 8)}`);
    const doc = randomUUID();
    const attributes = {
      knowledgeBaseIds: [],
      tags: ['draft'],
      metadata: { stage: 'review' },
      uploadedAt: 0,
      principals: ['u:owner', 'u:mallory'],
    };
    await store.upsert(space, [
      {
        documentId: doc,
        documentVersion: 1,
        chunkIndex: 0,
        vector: [1, 0, 0, 0, 0, 0, 0, 0],
        title: 't',
        text: 'secret plans',
        startOffset: 0,
        endOffset: 12,
        attributes,
      },
    ]);
    const readable = async (principal: string) =>
      (
        await store.query(space, {
          vector: [1, 0, 0, 0, 0, 0, 0, 0],
          topK: 5,
          principals: [principal],
        })
      ).length;
    const edit = { knowledgeBaseIds: [], tags: ['final'], metadata: {} };
    try {
      // Reads lag behind: the fetch inside setAttributes still sees mallory.
      fake.lagReads();
      await store.setPrincipals(space, doc, ['u:owner']);
      expect(await readable('u:mallory')).toBe(0);

      // With the recorded principals, the rewrite keeps mallory out, and still edits.
      await store.setAttributes(space, doc, edit, ['u:owner']);
      expect(await readable('u:mallory')).toBe(0);
      expect(await readable('u:owner')).toBe(1);
      const [hit] = await store.query(space, {
        vector: [1, 0, 0, 0, 0, 0, 0, 0],
        topK: 1,
        filter: parseFilter({ tags: 'final', 'metadata.stage': { $exists: false } }),
      });
      expect(hit?.documentId).toBe(doc);

      // What the fix prevents: without them, the stale read is written back.
      await store.setAttributes(space, doc, edit);
      expect(await readable('u:mallory')).toBe(1);
    } finally {
      fake.catchUp();
    }
  });

  it('speaks the data-plane endpoints the adapter is meant to use', () => {
    expect(new Set(fake.requests)).toEqual(
      new Set([
        'POST /vectors/upsert',
        'POST /query',
        'GET /vectors/fetch',
        'POST /vectors/update',
        'GET /vectors/list',
        'POST /vectors/delete',
      ]),
    );
  });
});

const apiKey = process.env['PINECONE_API_KEY'];
const indexHost = process.env['PINECONE_INDEX_HOST'];
const real = apiKey && indexHost ? describe : describe.skip;
if (!apiKey || !indexHost) {
  process.stdout.write(
    'PineconeStore against real Pinecone: SKIPPED (set PINECONE_API_KEY and PINECONE_INDEX_HOST of an 8-dimension cosine index)\n',
  );
}

real('PineconeStore against real Pinecone', () => {
  let store: PineconeStore;
  beforeAll(() => {
    store = new PineconeStore({ apiKey: apiKey ?? '', indexHost: indexHost ?? '' });
  });
  vectorStoreConformance(() => store);
});
