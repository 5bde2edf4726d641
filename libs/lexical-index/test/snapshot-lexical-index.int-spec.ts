import { randomUUID } from 'node:crypto';

import { type DocumentMetadata, type IndexSpace, parseFilter, toIndexSpace } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { sql } from 'kysely';

import {
  FEEDBACK_CAP,
  lexicalIndexMigrations,
  type LexicalMatch,
  type LexicalPassMemo,
  type LexicalQuery,
  type LexicalWrite,
  PgLexicalIndex,
  referenceEncoder,
  SnapshotLexicalIndex,
  type SnapshotOptions,
} from '../src';
import { BumpingPgIndex } from './support/bumping-pg-index';
import { lexicalIndexConformance } from './support/conformance';

jest.setTimeout(30_000);

/** Real Postgres; this file migrates its own throw-away schema. */
describe('SnapshotLexicalIndex', () => {
  const schema = `lexical_snap_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const url = process.env['DATABASE_URL']!;
  const pg = new BumpingPgIndex({ url, schema });
  const paths = { memory: 0, index: 0 };
  const snapshots = (options: Partial<SnapshotOptions> = {}) =>
    new SnapshotLexicalIndex(pg, {
      generation: async () => pg.generation,
      onSearch: (path) => paths[path]++,
      ...options,
    });

  beforeAll(async () => {
    const pool = createPool({ url, schema, maxConnections: 1 });
    await migrateToLatest(createDatabase(pool), schema, lexicalIndexMigrations);
    await pool.end();
  });

  afterAll(async () => {
    await pg.close();
    const pool = createPool({ url, schema: 'public', maxConnections: 1 });
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(createDatabase(pool));
    await pool.end();
  });

  describe('behaves as every lexical index does', () => {
    const before = { ...paths };
    lexicalIndexConformance(() => snapshots({ waitForSnapshot: true }));

    it('answered the plain-word searches above from memory', () => {
      expect(paths.memory - before.memory).toBeGreaterThanOrEqual(10);
    });
  });

  describe('behaves as every lexical index does, with reference statistics (LEXICAL_IDF=reference)', () => {
    const before = { ...paths };
    lexicalIndexConformance(
      () => snapshots({ waitForSnapshot: true, reference: referenceEncoder().reference }),
      'reference',
    );
    // LEXICAL_IDF=tenant: the suite's chunks are not tenant-wide, so the reference alone applies.
    lexicalIndexConformance(
      () =>
        snapshots({
          waitForSnapshot: true,
          reference: referenceEncoder().reference,
          tenantWide: true,
        }),
      'reference',
    );

    it('answered the plain-word searches above from memory', () => {
      expect(paths.memory - before.memory).toBeGreaterThanOrEqual(10);
    });
  });

  describe('against BM25 in Postgres', () => {
    const space = toIndexSpace(`same-${randomUUID().slice(0, 8)}`);
    const vocabulary = [
      'index', 'catalog', 'library', 'retrieval', 'query', 'citation', 'author', 'subject',
      'thesaurus', 'classification', 'journal', 'abstract', 'search', 'user', 'record', 'term',
    ]; // prettier-ignore
    // A fixed pseudo-random corpus: chunks of 3–40 words, one of four principals, zero to two of
    // three knowledge bases, some documents with two versions.
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const pick = <T>(values: T[]): T => values[Math.floor(random() * values.length)]!;
    const writes: LexicalWrite[] = Array.from({ length: 240 }, (_, i) => {
      const words = Array.from({ length: 3 + Math.floor(random() * 38) }, () => pick(vocabulary));
      const text = words.join(' ');
      return {
        documentId: `doc-${String(Math.floor(i / 3)).padStart(3, '0')}`,
        documentVersion: 1 + (i % 2),
        chunkIndex: i % 3,
        title: '',
        text,
        startOffset: i,
        endOffset: i + text.length,
        attributes: {
          knowledgeBaseIds: ['kb-a', 'kb-b', 'kb-c'].filter(() => random() < 0.4),
          tags: ['draft', 'inactive'].filter(() => random() < 0.3),
          metadata: (i % 4 === 0
            ? {}
            : { year: 2000 + (i % 7), lang: pick(['en', 'fr']) }) as DocumentMetadata,
          uploadedAt: 1_700_000_000_000 + i,
          principals: [pick(['group:a', 'group:b', 'group:c', 'user:z'])],
        },
      };
    });
    const queries: Array<Omit<LexicalQuery, 'topK'>> = [
      { text: 'library catalog' },
      { text: 'citation of journal abstracts', principals: ['group:a', 'user:z'] },
      { text: 'subject thesaurus term', principals: ['group:b'], knowledgeBaseIds: ['kb-a'] },
      { text: 'search the record', knowledgeBaseIds: ['kb-b', 'kb-c'] },
      { text: 'retrieval query', principals: ['nobody'] },
      { text: 'the of and' },
      {
        text: 'library index record',
        principals: ['group:a', 'group:b'],
        filter: parseFilter({ tags: { $nin: ['inactive'] }, 'metadata.year': { $gte: 2003 } }),
      },
      {
        text: 'catalog subject',
        filter: parseFilter({ $or: [{ 'metadata.lang': 'fr' }, { tags: 'draft' }] }),
      },
      {
        text: 'user query',
        principals: ['group:c', 'group:a'],
        expansion: {
          queryWeight: 0.7,
          terms: [
            { lexeme: 'index', weight: 0.2 },
            { lexeme: 'queri', weight: 0.05 },
            { lexeme: 'unseen', weight: 0.05 },
          ],
        },
      },
    ];

    beforeAll(async () => {
      await pg.upsert(space, writes);
    });

    it.each(queries.flatMap((q) => [5, 500].map((topK) => ({ ...q, topK }))))(
      'ranks "$text" for $principals in $knowledgeBaseIds, top $topK, as Postgres does',
      async (query) => {
        // Postgres holds no cap on feedback terms (docs/adr/0056); the next case checks the cap.
        const index = snapshots({ waitForSnapshot: true, feedbackCap: null });
        const served = paths.memory;
        const [expected, actual] = [
          await pg.search(space, query),
          await index.search(space, query),
        ];
        expect(paths.memory).toBe(served + 1);
        const withoutScore = ({ score: _score, ...rest }: LexicalMatch) => rest;
        expect(actual.map(withoutScore)).toEqual(expected.map(withoutScore));
        actual.forEach((match, i) => expect(match.score).toBeCloseTo(expected[i]!.score, 10));
        if (query.text !== 'the of and' && query.principals?.[0] !== 'nobody') {
          expect(actual.length).toBeGreaterThan(0);
        }
      },
    );

    it("starts RM3's second pass from the first pass's scores, and ranks as Postgres does (docs/adr/0058)", async () => {
      const expansion = queries[queries.length - 1]!.expansion!;
      const index = snapshots({ waitForSnapshot: true, feedbackCap: null });
      for (const asked of queries.filter((q) => !q.filter)) {
        for (const topK of [5, 500]) {
          const passMemo: LexicalPassMemo = {};
          const first = { ...asked, expansion: undefined, topK };
          await index.search(space, { ...first, withText: false, passMemo });
          const second = { ...first, expansion, passMemo };
          const [expected, actual] = [
            await pg.search(space, { ...first, expansion }),
            await index.search(space, second),
          ];
          expect({ text: asked.text, topK, reused: passMemo.reused }).toEqual({
            text: asked.text,
            topK,
            reused: true,
          });
          const withoutScore = ({ score: _score, ...rest }: LexicalMatch) => rest;
          expect(actual.map(withoutScore)).toEqual(expected.map(withoutScore));
          actual.forEach((match, i) => expect(match.score).toBeCloseTo(expected[i]!.score, 10));
        }
      }
    });

    it("ranks RM3's second pass in the first pass's snapshot, without reading the generation again", async () => {
      let reads = 0;
      const index = snapshots({
        waitForSnapshot: true,
        generation: async () => {
          reads += 1;
          return pg.generation;
        },
      });
      const asked = queries[queries.length - 1]!;
      const first = { ...asked, expansion: undefined, topK: 5 };
      await index.search(space, first); // builds the snapshot
      reads = 0;
      const passMemo: LexicalPassMemo = {};
      await index.search(space, { ...first, withText: false, passMemo });
      await index.search(space, { ...first, expansion: asked.expansion, passMemo });
      expect({ reads, reused: passMemo.reused }).toEqual({ reads: 1, reused: true });
      // Another search's second pass, without the memo, asks again.
      await index.search(space, { ...first, expansion: asked.expansion });
      expect(reads).toBe(2);
    });

    it('drops a feedback term found in most readable chunks, and scores the rest as Postgres does', async () => {
      const query = { ...queries[queries.length - 1]!, topK: 500 };
      const terms = query.expansion!.terms;
      const kept = { ...query, expansion: { ...query.expansion!, terms: terms.slice(1) } };
      // This space is small: without a postings floor the idf floor alone decides.
      const feedbackCap = { ...FEEDBACK_CAP, minPostings: 0 };
      const capped = await snapshots({ waitForSnapshot: true, feedbackCap }).search(space, query);
      const withoutIndex = await pg.search(space, kept);
      expect(capped.map((m) => [m.documentId, m.chunkIndex])).toEqual(
        withoutIndex.map((m) => [m.documentId, m.chunkIndex]),
      );
      capped.forEach((m, i) => expect(m.score).toBeCloseTo(withoutIndex[i]!.score, 10));
      const uncapped = await pg.search(space, query);
      expect(capped.map((m) => m.score)).not.toEqual(uncapped.map((m) => m.score));
    });

    it('returns no text for a ranking that asked for none', async () => {
      const query = { text: 'library catalog', topK: 3, withText: false };
      const actual = await snapshots({ waitForSnapshot: true }).search(space, query);
      expect(actual).toHaveLength(3);
      expect(actual).toEqual(await pg.search(space, query));
      expect(actual.every((m) => m.text === '' && m.title === '')).toBe(true);
    });
  });

  describe('freshness', () => {
    const record = (documentId: string, text: string, principals: string[]): LexicalWrite => ({
      documentId,
      documentVersion: 1,
      chunkIndex: 0,
      title: '',
      text,
      startOffset: 0,
      endOffset: text.length,
      attributes: { knowledgeBaseIds: [], tags: [], metadata: {}, uploadedAt: 0, principals },
    });
    const until = async (done: () => Promise<boolean>) => {
      for (let i = 0; i < 100 && !(await done()); i++) await new Promise((r) => setTimeout(r, 20));
    };
    let space: IndexSpace;

    beforeEach(async () => {
      space = toIndexSpace(`fresh-${randomUUID().slice(0, 8)}`);
      await pg.upsert(space, [record('d1', 'harbour cranes unload ships', ['group:crew'])]);
    });

    it('answers from Postgres until the snapshot of the current generation is built, then from memory', async () => {
      const index = snapshots();
      const query = { text: 'cranes', topK: 5, principals: ['group:crew'] };
      const before = { ...paths };
      expect(await index.search(space, query)).toHaveLength(1);
      expect(paths.index).toBe(before.index + 1);
      await until(async () => {
        await index.search(space, query);
        return paths.memory > before.memory;
      });
      expect(paths.memory).toBeGreaterThan(before.memory);

      // A write moves the generation on: the next search sees it, though no snapshot has it yet.
      await pg.upsert(space, [record('d2', 'cranes and cranes', ['group:crew'])]);
      const afterWrite = await index.search(space, query);
      expect(afterWrite.map((m) => m.documentId)).toEqual(['d2', 'd1']);
    });

    it('drops a chunk from a reader’s results as soon as their access is revoked', async () => {
      const index = snapshots({ waitForSnapshot: true });
      const query = { text: 'ships', topK: 5, principals: ['group:crew'] };
      expect(await index.search(space, query)).toHaveLength(1);
      await pg.setPrincipals(space, 'd1', ['group:owners']);
      expect(await index.search(space, query)).toEqual([]);
      await pg.deleteDocument(space, 'd1');
      expect(await index.search(space, { text: 'ships', topK: 5 })).toEqual([]);
    });

    it('reads a chunk’s text, term vector and location once, and keeps them across generations', async () => {
      class Counting extends BumpingPgIndex {
        readonly reads: Record<'texts' | 'termVectors' | 'locations', string[][]> = {
          texts: [],
          termVectors: [],
          locations: [],
        };
        override texts(...args: Parameters<PgLexicalIndex['texts']>) {
          this.reads.texts.push(args[1].map((c) => c.documentId));
          return super.texts(...args);
        }
        override termVectors(...args: Parameters<PgLexicalIndex['termVectors']>) {
          this.reads.termVectors.push(args[1].map((c) => c.documentId));
          return super.termVectors(...args);
        }
        override locations(...args: Parameters<PgLexicalIndex['locations']>) {
          this.reads.locations.push(args[1].map((c) => c.documentId));
          return super.locations(...args);
        }
      }
      const source = new Counting({ url, schema });
      const index = new SnapshotLexicalIndex(source, {
        generation: async () => pg.generation,
        waitForSnapshot: true,
      });
      const query = { text: 'cranes', topK: 5, principals: ['group:crew'] };
      const d1 = [{ documentId: 'd1', documentVersion: 1, chunkIndex: 0 }];
      try {
        expect((await index.search(space, query)).map((m) => m.text)).toEqual([
          'harbour cranes unload ships',
        ]);
        expect(await index.termVectors(space, d1)).toEqual(await pg.termVectors(space, d1));
        expect(await index.locations(space, d1)).toEqual(await pg.locations(space, d1));

        // A write retires the snapshot, not what d1's identity fixes: only d2 is read.
        await pg.upsert(space, [record('d2', 'cranes and cranes', ['group:crew'])]);
        const after = await index.search(space, query);
        expect(after.map((m) => [m.documentId, m.text])).toEqual([
          ['d2', 'cranes and cranes'],
          ['d1', 'harbour cranes unload ships'],
        ]);
        expect(await index.termVectors(space, d1)).toEqual(await pg.termVectors(space, d1));
        expect(await index.locations(space, d1)).toEqual(await pg.locations(space, d1));
        // d2's term vector is read at the build, for the lists carried over (posting-lists.ts).
        expect(source.reads).toEqual({
          texts: [['d1'], ['d2']],
          termVectors: [['d1'], ['d2']],
          locations: [['d1']],
        });

        // Another space's chunk of the same identity is its own entry.
        const other = toIndexSpace(`${space}-other`);
        await pg.upsert(other, [record('d1', 'other cranes', ['group:crew'])]);
        expect((await index.search(other, query)).map((m) => m.text)).toEqual(['other cranes']);
      } finally {
        await source.close();
      }
    });

    it('answers from Postgres and says so when a snapshot cannot be read', async () => {
      class Unreadable extends BumpingPgIndex {
        override async spaceChunks(): Promise<never> {
          throw new Error('chunks unreadable');
        }
      }
      const source = new Unreadable({ url, schema });
      const failures: string[] = [];
      const index = new SnapshotLexicalIndex(source, {
        generation: async () => pg.generation,
        waitForSnapshot: true,
        onBuildFailed: (failed, error) => failures.push(`${failed}: ${String(error)}`),
      });
      try {
        expect(await index.search(space, { text: 'ships', topK: 5 })).toHaveLength(1);
        expect(failures).toEqual([`${space}: Error: chunks unreadable`]);
      } finally {
        await source.close();
      }
    });

    it('leaves a space larger than it may hold to Postgres', async () => {
      const index = snapshots({ waitForSnapshot: true, maxChunks: 0 });
      const before = { ...paths };
      expect(await index.search(space, { text: 'ships', topK: 5 })).toHaveLength(1);
      expect(paths).toEqual({ ...before, index: before.index + 1 });
    });

    it('leaves typed syntax and identifiers to Postgres, and scores filtered searches itself', async () => {
      const index = snapshots({ waitForSnapshot: true });
      const before = { ...paths };
      for (const text of ['"harbour cranes"', 'cranes -ships', 'ERR_CRANE_DOWN cranes']) {
        await index.search(space, { text, topK: 5 });
      }
      expect(paths).toEqual({ ...before, index: before.index + 3 });
      const filtered = (tag: string) =>
        index.search(space, {
          text: 'cranes',
          topK: 5,
          filter: parseFilter({ tags: { $nin: [tag] } }),
        });
      expect(await filtered('archived')).toHaveLength(1);
      await pg.setAttributes(space, 'd1', {
        knowledgeBaseIds: [],
        tags: ['archived'],
        metadata: {},
      });
      expect(await filtered('archived')).toEqual([]);
      expect(paths).toEqual({ memory: before.memory + 2, index: before.index + 3 });
    });
  });
});
