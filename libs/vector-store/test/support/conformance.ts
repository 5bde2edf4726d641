import { randomUUID } from 'node:crypto';

import {
  type DocumentAttributes,
  FILTER_CASES,
  FILTER_DOC_ATTRIBUTES,
  FILTER_DOCS,
  type FilterDoc,
  parseFilter,
  toIndexSpace,
} from '@kb/contracts';

import type { VectorRecord, VectorStore } from '../../src';

export const DIM = 8;
const unit = (hot: number): number[] => Array.from({ length: DIM }, (_, i) => (i === hot ? 1 : 0));
const record = (
  documentId: string,
  version: number,
  chunkIndex: number,
  vector: number[],
  attributes: DocumentAttributes = {
    knowledgeBaseIds: [],
    tags: [],
    metadata: {},
    uploadedAt: 0,
    principals: [],
  },
): VectorRecord => ({
  documentId,
  documentVersion: version,
  chunkIndex,
  vector,
  title: 't',
  text: `chunk ${chunkIndex} of v${version}`,
  startOffset: chunkIndex * 10,
  endOffset: chunkIndex * 10 + 9,
  attributes,
});

/** The behaviour every VectorStore backend must share; each backend's test file runs it. */
export function vectorStoreConformance(getStore: () => VectorStore): void {
  const tenant = toIndexSpace(`t-${randomUUID().slice(0, 8)}`);

  it('returns nearest chunks first with their metadata, scoped to the namespace', async () => {
    const store = getStore();
    const doc = randomUUID();
    await store.upsert(tenant, [
      record(doc, 1, 0, unit(0)),
      record(doc, 1, 1, unit(1)),
      record(doc, 1, 2, unit(2)),
    ]);
    await store.upsert(toIndexSpace(`${tenant}-other`), [record(randomUUID(), 1, 0, unit(1))]);
    const matches = await store.query(tenant, { vector: unit(1), topK: 2 });
    expect(matches).toHaveLength(2);
    expect(matches[0]).toMatchObject({
      documentId: doc,
      documentVersion: 1,
      chunkIndex: 1,
      title: 't',
      text: 'chunk 1 of v1',
      startOffset: 10,
      endOffset: 19,
    });
    expect(matches[0]!.score).toBeCloseTo(1, 5);
    expect(matches[0]!.score).toBeGreaterThanOrEqual(matches[1]!.score);
    expect(matches.every((m) => m.documentId === doc)).toBe(true);
    // Without texts (the caller reads them elsewhere): the same chunks, order and scores.
    const ranked = await store.query(tenant, { vector: unit(1), topK: 2, withText: false });
    const rank = (m: (typeof matches)[number]) => [
      m.documentId,
      m.chunkIndex,
      m.startOffset,
      m.score,
    ];
    expect(ranked.map(rank)).toEqual(matches.map(rank));
  });

  it('upserting the same records twice keeps one copy', async () => {
    const store = getStore();
    const doc = randomUUID();
    const records = [record(doc, 1, 0, unit(3)), record(doc, 1, 1, unit(4))];
    await store.upsert(tenant, records);
    await store.upsert(tenant, records);
    expect(await store.countDocument(tenant, doc)).toBe(2);
  });

  it('removes versions older than the given one, never newer ones, and reports the count', async () => {
    const store = getStore();
    const doc = randomUUID();
    await store.upsert(tenant, [
      record(doc, 1, 0, unit(5)),
      record(doc, 1, 1, unit(5)),
      record(doc, 2, 0, unit(6)),
      record(doc, 3, 0, unit(7)),
    ]);
    expect(await store.deleteDocument(tenant, doc, 2)).toBe(2);
    expect(await store.countDocument(tenant, doc)).toBe(2);
    expect(await store.deleteDocument(tenant, doc)).toBe(2);
    expect(await store.countDocument(tenant, doc)).toBe(0);
  });

  it('removes many documents at once, every version, and nothing of the others; again removes nothing', async () => {
    const store = getStore();
    const ns = toIndexSpace(`${tenant}-bulk`);
    const gone = [randomUUID(), randomUUID(), randomUUID()];
    const kept = randomUUID();
    await store.upsert(ns, [
      ...gone.flatMap((doc) => [record(doc, 1, 0, unit(1)), record(doc, 2, 0, unit(2))]),
      record(gone[0]!, 2, 1, unit(3)),
      record(kept, 1, 0, unit(4)),
    ]);
    await store.upsert(tenant, [record(gone[1]!, 1, 0, unit(5))]);
    expect(await store.deleteDocuments(ns, [...gone, randomUUID()])).toBe(7);
    for (const doc of gone) expect(await store.countDocument(ns, doc)).toBe(0);
    expect(await store.countDocument(ns, kept)).toBe(1);
    // Another namespace's copy of a document is not touched.
    expect(await store.countDocument(tenant, gone[1]!)).toBe(1);
    expect(await store.deleteDocuments(ns, gone)).toBe(0);
    expect(await store.deleteDocuments(ns, [])).toBe(0);
  });

  it('lists each document of a namespace once, with every version it holds', async () => {
    const store = getStore();
    const ns = toIndexSpace(`${tenant}-listing`);
    const docs = [randomUUID(), randomUUID(), randomUUID()].sort();
    // Enough chunks that a paged listing has to carry a document across pages.
    await store.upsert(ns, [
      ...Array.from({ length: 120 }, (_, i) => record(docs[0]!, 1, i, unit(i % DIM))),
      ...Array.from({ length: 3 }, (_, i) => record(docs[0]!, 2, i, unit(1))),
      record(docs[1]!, 4, 0, unit(2)),
      record(docs[2]!, 1, 0, unit(3)),
      record(docs[2]!, 7, 0, unit(3)),
    ]);
    const listed = [];
    for await (const entry of store.documentVersions(ns)) listed.push(entry);
    expect(listed).toEqual([
      { documentId: docs[0], versions: [1, 2] },
      { documentId: docs[1], versions: [4] },
      { documentId: docs[2], versions: [1, 7] },
    ]);
    expect(store.isReady()).toBe(true);
  });

  describe('filters, inside the search', () => {
    const ns = toIndexSpace(`${tenant}-filters`);
    const ids = Object.fromEntries(FILTER_DOCS.map((d) => [d, randomUUID()])) as Record<
      FilterDoc,
      string
    >;
    const nameOf = new Map(FILTER_DOCS.map((d) => [ids[d], d]));

    beforeAll(async () => {
      await getStore().upsert(
        ns,
        FILTER_DOCS.map((d, i) => record(ids[d], 1, 0, unit(i), FILTER_DOC_ATTRIBUTES[d])),
      );
    });

    it.each(FILTER_CASES)('$name', async ({ filter, knowledgeBaseIds, principals, expected }) => {
      const matches = await getStore().query(ns, {
        vector: unit(0),
        topK: 10,
        filter: parseFilter(filter(ids)),
        knowledgeBaseIds,
        principals,
      });
      expect(matches.map((m) => nameOf.get(m.documentId)).sort()).toEqual(expected);
    });

    it('fills top-k with matching chunks even when closer ones do not match', async () => {
      const store = getStore();
      const space = toIndexSpace(`${tenant}-topk`);
      const near = Array.from({ length: 20 }, (_, i) =>
        record(randomUUID(), 1, 0, unit(0), { ...FILTER_DOC_ATTRIBUTES.D, tags: [`n${i}`] }),
      );
      const wanted = [randomUUID(), randomUUID()];
      await store.upsert(space, [
        ...near,
        ...wanted.map((id, i) => record(id, 1, 0, unit(1 + i), FILTER_DOC_ATTRIBUTES.A)),
      ]);
      const matches = await store.query(space, {
        vector: unit(0),
        topK: 2,
        filter: parseFilter({ tags: 'q1' }),
      });
      expect(matches.map((m) => m.documentId).sort()).toEqual([...wanted].sort());
    });

    it('changes who may read a document in place', async () => {
      const store = getStore();
      const space = toIndexSpace(`${tenant}-acl`);
      const doc = randomUUID();
      await store.upsert(space, [
        record(doc, 1, 0, unit(0), { ...FILTER_DOC_ATTRIBUTES.D, principals: ['u:dan'] }),
        record(doc, 1, 1, unit(1), { ...FILTER_DOC_ATTRIBUTES.D, principals: ['u:dan'] }),
      ]);
      const visibleTo = async (principals: string[]) =>
        (await store.query(space, { vector: unit(0), topK: 5, principals })).length;
      expect(await visibleTo(['u:eve'])).toBe(0);
      expect(await store.setPrincipals(space, doc, ['u:eve'])).toBe(2);
      expect(await visibleTo(['u:eve'])).toBe(2);
      expect(await visibleTo(['u:dan'])).toBe(0);
    });

    it('changes tags, metadata and knowledge bases in place, dropping removed metadata keys', async () => {
      const store = getStore();
      const space = toIndexSpace(`${tenant}-attrs`);
      const doc = randomUUID();
      await store.upsert(space, [record(doc, 1, 0, unit(0), FILTER_DOC_ATTRIBUTES.A)]);
      const found = async (filter: Record<string, unknown>, knowledgeBaseIds?: string[]) =>
        (
          await store.query(space, {
            vector: unit(0),
            topK: 5,
            filter: parseFilter(filter),
            knowledgeBaseIds,
          })
        ).length;
      expect(await found({ 'metadata.draft': true })).toBe(1);
      expect(
        await store.setAttributes(space, doc, {
          knowledgeBaseIds: ['kb9'],
          tags: ['archived'],
          metadata: { author: 'ann' },
        }),
      ).toBe(1);
      expect(await found({ tags: 'archived' })).toBe(1);
      expect(await found({ tags: 'finance' })).toBe(0);
      expect(await found({ 'metadata.draft': { $exists: true } })).toBe(0);
      expect(await found({ 'metadata.author': 'ann' }, ['kb9'])).toBe(1);
      expect(await found({}, ['kb1'])).toBe(0);
    });

    it('fetches stored vectors by chunk, leaving unknown chunks out', async () => {
      const found = await getStore().fetchVectors(ns, [
        { documentId: ids.B, documentVersion: 1, chunkIndex: 0 },
        { documentId: randomUUID(), documentVersion: 1, chunkIndex: 0 },
      ]);
      expect([...found.keys()]).toEqual([`${ids.B}#1#0`]);
      expect(found.get(`${ids.B}#1#0`)).toEqual(unit(1));
    });
  });
}
