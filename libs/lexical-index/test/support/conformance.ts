import { randomUUID } from 'node:crypto';

import {
  FILTER_CASES,
  FILTER_DOC_ATTRIBUTES,
  FILTER_DOCS,
  type FilterDoc,
  parseFilter,
  toIndexSpace,
} from '@kb/contracts';

import type { LexicalIndex, LexicalWrite } from '../../src';

/**
 * The behaviour every LexicalIndex backend must share; each backend's test file runs it against a
 * fresh, empty index (BM25 statistics are per space, so the spaces here hold only what it writes).
 * `statistics`: how the backend weighs terms (docs/adr/0056): counted over the caller's readable
 * chunks (`readable`, ADR 19) or fixed in advance (`reference`); the cases that assert counted
 * statistics say which they hold for.
 */
export function lexicalIndexConformance(
  getIndex: () => LexicalIndex,
  statistics: 'readable' | 'reference' = 'readable',
): void {
  // Spaces of their own, so a file may run this more than once against one index.
  const run = randomUUID().slice(0, 8);
  const tenant = toIndexSpace(`t1-${run}`);
  const otherTenant = toIndexSpace(`t2-${run}`);
  const doc = randomUUID();
  const record = (chunkIndex: number, text: string, version = 1): LexicalWrite => ({
    documentId: doc,
    documentVersion: version,
    chunkIndex,
    title: 'Library science',
    text,
    startOffset: chunkIndex * 100,
    endOffset: chunkIndex * 100 + text.length,
    attributes: { knowledgeBaseIds: [], tags: [], metadata: {}, uploadedAt: 0, principals: [] },
  });

  beforeAll(async () => {
    await getIndex().upsert(tenant, [
      record(0, 'The Dewey decimal classification organizes books by subject.'),
      record(1, 'Citation indexing links papers that cite each other.'),
      record(2, 'Automatic indexing of documents with computers and classification.'),
    ]);
    await getIndex().upsert(otherTenant, [
      {
        ...record(0, 'Dewey decimal classification for another tenant.'),
        documentId: randomUUID(),
      },
    ]);
  });

  it('ranks chunks sharing more (stemmed) query words first, within the tenant only', async () => {
    const matches = await getIndex().search(tenant, {
      text: 'Which Dewey classification organizes the books?',
      topK: 10,
    });
    expect(matches[0]).toMatchObject({ documentId: doc, chunkIndex: 0 });
    expect(matches.map((m) => m.chunkIndex)).toContain(2); // shares only "classification"
    expect(matches.every((m) => m.documentId === doc)).toBe(true);
    expect(matches[0]!.score).toBeGreaterThan(matches[matches.length - 1]!.score);
  });

  it('gives the indexed terms of chunks, with counts and the chunk length', async () => {
    const vectors = await getIndex().termVectors(tenant, [
      { documentId: doc, documentVersion: 1, chunkIndex: 1 },
      { documentId: doc, documentVersion: 1, chunkIndex: 9 },
    ]);
    expect([...vectors.keys()]).toEqual([`${doc}#1#1`]);
    const vector = vectors.get(`${doc}#1#1`)!;
    // "Citation indexing links papers that cite each other." (and its title)
    expect(vector.terms.size).toBeGreaterThanOrEqual(5);
    const counted = [...vector.terms.values()].reduce((a, b) => a + b, 0);
    expect(vector.length).toBe(counted);
    expect(
      await getIndex().termVectors(otherTenant, [
        { documentId: doc, documentVersion: 1, chunkIndex: 1 },
      ]),
    ).toEqual(new Map());
  });

  it('scores feedback terms of an expansion, weighted, beside the query terms (RM3)', async () => {
    const index = getIndex();
    const query = { text: 'Dewey classification', topK: 10 };
    const plain = await index.search(tenant, query);
    expect(plain.map((m) => m.chunkIndex).sort()).toEqual([0, 2]);
    // The citation chunk's own terms as feedback: it is found although it shares no query word.
    const citation = (
      await index.termVectors(tenant, [{ documentId: doc, documentVersion: 1, chunkIndex: 1 }])
    ).get(`${doc}#1#1`)!;
    const terms = [...citation.terms.keys()].map((lexeme) => ({ lexeme, weight: 0.3 }));
    const expanded = await index.search(tenant, {
      ...query,
      expansion: { queryWeight: 0.7, terms },
    });
    expect(expanded.map((m) => m.chunkIndex)).toContain(1);
    // Without feedback terms, λ shared by the query's two terms scales every score alike.
    const scaled = await index.search(tenant, {
      ...query,
      expansion: { queryWeight: 0.7, terms: [] },
    });
    expect(scaled.map((m) => m.chunkIndex)).toEqual(plain.map((m) => m.chunkIndex));
    scaled.forEach((m, i) => expect(m.score).toBeCloseTo((plain[i]!.score * 0.7) / 2, 6));
  });

  it('treats query text as words, never as syntax', async () => {
    const index = getIndex();
    expect(
      await index.search(tenant, { text: "citation'); DROP TABLE chunks; --", topK: 5 }),
    ).toHaveLength(1);
    expect(await index.search(tenant, { text: '!!! & | :* ()', topK: 5 })).toEqual([]);
    expect(await index.search(tenant, { text: 'the of and', topK: 5 })).toEqual([]); // stop words only
  });

  it('tells which chunks satisfy a query’s phrases, exclusions and operators', async () => {
    const index = getIndex();
    const chunks = [0, 1, 2].map((chunkIndex) => ({
      documentId: doc,
      documentVersion: 1,
      chunkIndex,
    }));
    const key = (chunkIndex: number) => `${doc}#1#${chunkIndex}`;
    const matching = async (query: string) =>
      [...(await index.matching(tenant, query, chunks))].sort();
    // Plain words constrain nothing: every chunk asked about.
    expect(await matching('indexing classification')).toEqual([0, 1, 2].map(key));
    expect(await matching('indexing -citation')).toEqual([key(0), key(2)]);
    expect(await matching('"decimal classification"')).toEqual([key(0)]);
    expect(await matching('citation OR computers')).toEqual([key(1), key(2)]);
    expect(await matching('indexing AND NOT computers')).toEqual([key(1)]);
    // A chunk the index does not hold satisfies nothing.
    const unknown = { documentId: randomUUID(), documentVersion: 1, chunkIndex: 0 };
    expect([...(await index.matching(tenant, 'books -citation', [unknown]))]).toEqual([]);
  });

  it('returns the chunks around anchors within the same document version only', async () => {
    const index = getIndex();
    const other = randomUUID();
    await index.upsert(tenant, [
      { ...record(0, 'Other document first chunk.'), documentId: other },
    ]);
    const around = await index.chunksAround(
      tenant,
      [{ documentId: doc, documentVersion: 1, chunkIndex: 0 }],
      1,
    );
    expect(around.map((c) => [c.documentId, c.chunkIndex])).toEqual([
      [doc, 0],
      [doc, 1],
    ]);
    expect(
      await index.chunksAround(tenant, [{ documentId: doc, documentVersion: 1, chunkIndex: 2 }], 5),
    ).toHaveLength(3);
    expect(
      await index.chunksAround(
        otherTenant,
        [{ documentId: doc, documentVersion: 1, chunkIndex: 0 }],
        1,
      ),
    ).toEqual([]);
  });

  it('reads the title and text of chunks by reference, in their own space only', async () => {
    const index = getIndex();
    const written = randomUUID();
    await index.upsert(tenant, [
      {
        ...record(0, 'Union catalogues list the holdings of many libraries.'),
        documentId: written,
      },
      { ...record(1, 'Interlibrary loan moves books between them.'), documentId: written },
    ]);
    const ref = (chunkIndex: number, documentVersion = 1) => ({
      documentId: written,
      documentVersion,
      chunkIndex,
    });
    const texts = await index.texts(tenant, [ref(1), ref(0), ref(7), ref(0, 2)]);
    expect(new Map([...texts].sort())).toEqual(
      new Map([
        [
          `${written}#1#0`,
          {
            title: 'Library science',
            text: 'Union catalogues list the holdings of many libraries.',
          },
        ],
        [
          `${written}#1#1`,
          { title: 'Library science', text: 'Interlibrary loan moves books between them.' },
        ],
      ]),
    );
    expect((await index.texts(otherTenant, [ref(0)])).size).toBe(0);
    expect((await index.texts(tenant, [])).size).toBe(0);
  });

  it("keeps each chunk's page and heading path, and reads them by chunk", async () => {
    const index = getIndex();
    const located = randomUUID();
    await index.upsert(tenant, [
      { ...record(0, 'Intro.'), documentId: located, page: 3, headingPath: ['Guide', 'Setup'] },
      { ...record(1, 'No location.'), documentId: located },
    ]);
    const ref = (chunkIndex: number) => ({ documentId: located, documentVersion: 1, chunkIndex });
    const locations = await index.locations(tenant, [ref(0), ref(1), ref(7)]);
    expect([...locations]).toEqual([
      [`${located}#1#0`, { page: 3, headingPath: ['Guide', 'Setup'] }],
      [`${located}#1#1`, { headingPath: [] }],
    ]);
    expect((await index.locations(otherTenant, [ref(0)])).size).toBe(0);
    // Search results keep their shape: locations are read on their own.
    const [match] = await index.search(tenant, { text: 'intro', topK: 1 });
    expect(match).not.toHaveProperty('page');
  });

  it('replaces a document version and removes older ones, never newer ones', async () => {
    const index = getIndex();
    await index.upsert(tenant, [record(0, 'Second version about cataloguing.', 2)]);
    await index.upsert(tenant, [record(0, 'Third version, still being written.', 3)]);
    const listed = [];
    for await (const entry of index.documentVersions(tenant)) listed.push(entry);
    expect(listed).toContainEqual({ documentId: doc, versions: [1, 2, 3] });
    expect(await index.deleteDocument(tenant, doc, 2)).toBe(3);
    expect(await index.countDocument(tenant, doc)).toBe(2);
    expect((await index.search(tenant, { text: 'cataloguing', topK: 5 }))[0]).toMatchObject({
      documentVersion: 2,
    });
    expect(await index.deleteDocument(tenant, doc, 3)).toBe(1);
    expect(await index.countDocument(tenant, doc)).toBe(1);
  });

  // Emptying a knowledge base (ADR 24): the statistics count what is left, as if the removed
  // documents had never been indexed (ADR 19).
  it('removes many documents at once, and scores what is left as if they had never been there', async () => {
    const index = getIndex();
    const run = randomUUID().slice(0, 8);
    const space = toIndexSpace(`bulk-${run}`);
    const fresh = toIndexSpace(`bulk-fresh-${run}`);
    const keptDoc = randomUUID();
    const kept = [
      { ...record(0, 'Shelving rules for rare maps.'), documentId: keptDoc },
      { ...record(1, 'Maps of the reading room.'), documentId: keptDoc },
    ];
    const gone = [randomUUID(), randomUUID(), randomUUID()];
    await index.upsert(space, [
      ...kept,
      ...gone.flatMap((documentId, i) => [
        { ...record(0, `Maps and atlases, box ${i}.`), documentId },
        { ...record(1, `More maps and a long list of other words, box ${i}.`, 2), documentId },
      ]),
    ]);
    await index.upsert(fresh, kept);
    expect(await index.deleteDocuments(space, [...gone, randomUUID()])).toBe(6);
    for (const documentId of gone) expect(await index.countDocument(space, documentId)).toBe(0);
    expect(await index.countDocument(space, keptDoc)).toBe(2);
    const scores = async (s: typeof space) =>
      (await index.search(s, { text: 'maps', topK: 10 })).map((m) => [m.chunkIndex, m.score]);
    expect(await scores(space)).toEqual(await scores(fresh));
    expect(await index.deleteDocuments(space, gone)).toBe(0);
    expect(await index.deleteDocuments(space, [])).toBe(0);
  });

  // Review M3: with statistics over the whole space, a reader could solve idf for df and learn
  // how many chunks they cannot read contain a term.
  it('scores a term the same whatever unreadable chunks contain it', async () => {
    const index = getIndex();
    const space = toIndexSpace(`acl-stats-${randomUUID().slice(0, 8)}`);
    const readable = { ...record(0, '').attributes, principals: ['group:staff'] };
    const secret = { ...readable, principals: ['group:board'] };
    await index.upsert(space, [
      { ...record(0, 'The quarterly report mentions layoffs once.'), attributes: readable },
      { ...record(1, 'Canteen menu and parking rules.'), attributes: readable },
    ]);
    const asReader = () =>
      index.search(space, { text: 'layoffs', topK: 5, principals: ['user:u1', 'group:staff'] });
    const asAdmin = () => index.search(space, { text: 'layoffs', topK: 5 });
    const [before, adminBefore] = [await asReader(), await asAdmin()];
    expect(before).toHaveLength(1);
    await index.upsert(space, [
      {
        ...record(0, 'Board minutes: layoffs planned.'),
        documentId: randomUUID(),
        attributes: secret,
      },
      {
        ...record(0, 'Layoffs, layoffs: the list of names, a much longer chunk than the others.'),
        documentId: randomUUID(),
        attributes: secret,
      },
    ]);
    const after = await asReader();
    expect(after).toHaveLength(1);
    expect(after[0]!.score).toBe(before[0]!.score);
    if (statistics === 'readable') {
      // Counted statistics: whoever may read the secret chunks sees them counted.
      expect((await asAdmin())[0]!.score).not.toBe(adminBefore[0]!.score);
    } else {
      // Fixed statistics: nobody's score moves with what other chunks contain.
      const same = (await asAdmin()).find((m) => m.documentId === adminBefore[0]!.documentId);
      expect(same!.score).toBe(adminBefore[0]!.score);
    }
  });

  describe('filters, before top-k', () => {
    const space = toIndexSpace(`filters-${randomUUID().slice(0, 8)}`);
    const ids = Object.fromEntries(FILTER_DOCS.map((d) => [d, randomUUID()])) as Record<
      FilterDoc,
      string
    >;
    const nameOf = new Map(FILTER_DOCS.map((d) => [ids[d], d]));

    beforeAll(async () => {
      await getIndex().upsert(
        space,
        FILTER_DOCS.map((d) => ({
          ...record(0, `Shared words about indexing, document ${d}.`),
          documentId: ids[d],
          attributes: FILTER_DOC_ATTRIBUTES[d],
        })),
      );
    });

    it.each(FILTER_CASES)('$name', async ({ filter, knowledgeBaseIds, principals, expected }) => {
      const matches = await getIndex().search(space, {
        text: 'indexing',
        topK: 10,
        filter: parseFilter(filter(ids)),
        knowledgeBaseIds,
        principals,
      });
      expect(matches.map((m) => nameOf.get(m.documentId)).sort()).toEqual(expected);
    });

    it('fills top-k with matching chunks even when better-scoring ones do not match', async () => {
      const index = getIndex();
      const crowd = toIndexSpace(`crowd-${randomUUID().slice(0, 8)}`);
      const wanted = randomUUID();
      await index.upsert(crowd, [
        ...Array.from({ length: 20 }, (_, i) => ({
          ...record(0, 'indexing indexing indexing'),
          documentId: randomUUID(),
          attributes: { ...FILTER_DOC_ATTRIBUTES.D, tags: [`n${i}`] },
        })),
        {
          ...record(0, 'indexing once, among many other words in a longer chunk of text'),
          documentId: wanted,
          attributes: FILTER_DOC_ATTRIBUTES.A,
        },
      ]);
      const matches = await index.search(crowd, {
        text: 'indexing',
        topK: 1,
        filter: parseFilter({ tags: 'q1' }),
      });
      expect(matches.map((m) => m.documentId)).toEqual([wanted]);
    });
  });
}
