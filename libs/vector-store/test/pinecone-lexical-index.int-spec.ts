import { randomUUID } from 'node:crypto';

import { toIndexSpace } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import {
  lexicalIndexMigrations,
  type LexicalWrite,
  PgLexicalIndex,
  referenceEncoder,
  type SparseEncoder,
} from '@kb/lexical-index';
import { lexicalIndexConformance } from '@kb/lexical-index/test/support/conformance';
import { sql } from 'kysely';

import { PineconeLexicalIndex } from '../src';
import { FakePineconeDataPlane } from './support/fake-pinecone';
import { TestSparseEncoder } from './support/test-sparse-encoder';

jest.setTimeout(60_000);

const url = process.env['DATABASE_URL']!;

/** A throw-away schema of the shared Postgres for the chunk rows (no migration of this branch). */
function throwAwayMetadata() {
  const schema = `pinecone_lexical_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const metadata = new PgLexicalIndex({ url, schema });
  const onSchema = async (work: (db: ReturnType<typeof createDatabase>) => Promise<unknown>) => {
    const pool = createPool({ url, schema, maxConnections: 1 });
    await work(createDatabase(pool));
    await pool.end();
  };
  return {
    metadata,
    migrate: () => onSchema((db) => migrateToLatest(db, schema, lexicalIndexMigrations)),
    drop: async () => {
      await metadata.close();
      await onSchema((db) => sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db));
    },
  };
}

/** A PineconeLexicalIndex over a fresh FAKE sparse index and a throw-away schema, per block. */
function servedOnFake(encoder: SparseEncoder) {
  const fake = new FakePineconeDataPlane({ vectorType: 'sparse' });
  const { metadata, migrate, drop } = throwAwayMetadata();
  const served = { fake, metadata, index: undefined as unknown as PineconeLexicalIndex };
  beforeAll(async () => {
    await migrate();
    served.index = new PineconeLexicalIndex({
      apiKey: 'fake-key',
      indexHost: await fake.start(),
      metadata,
      encoder,
    });
  });
  afterAll(async () => {
    await drop();
    await fake.stop();
  });
  return served;
}

describe('PineconeLexicalIndex (the shipped reference encoder) on the FAKE Pinecone, rows in Postgres', () => {
  const served = servedOnFake(referenceEncoder());
  // Fixed reference statistics: the cases asserting counts over the readable set apply to
  // `readable` scoring only (conformance.ts); ADR 19's attack case runs as is.
  lexicalIndexConformance(() => served.index, 'reference');
});

describe('PineconeLexicalIndex on the FAKE Pinecone sparse index: syntax, limits, ACL, writes', () => {
  // One idf for every lexeme, so the rankings below do not move with the reference table.
  const served = servedOnFake(new TestSparseEncoder());
  const fake = served.fake;

  const chunk = (documentId: string, text: string, principals = ['user:u']): LexicalWrite => ({
    documentId,
    documentVersion: 1,
    chunkIndex: 0,
    title: '',
    text,
    startOffset: 0,
    endOffset: text.length,
    attributes: { knowledgeBaseIds: ['kb1'], tags: [], metadata: {}, uploadedAt: 0, principals },
  });

  describe('typed syntax, checked against the chunk rows on a larger pool', () => {
    const space = toIndexSpace(`q-${randomUUID().slice(0, 8)}`);
    const texts = [
      /* 0 */ 'The client failed with ERR_CONNECTION_RESET after the proxy closed the socket.',
      /* 1 */ 'A connection reset by the peer ends the socket; the error is retried.',
      /* 2 */ 'Call foo.bar() before the cache is warmed, then read the cache.',
      /* 3 */ 'The bar of the foo cache is warmed at boot.',
      /* 4 */ 'Redis keeps the cache in memory; eviction follows the LRU policy.',
      /* 5 */ 'The cache for sessions lives in Postgres, not in memory.',
    ];
    const ids = async (text: string) =>
      (await served.index.search(space, { text, topK: 10 })).map((m) => m.documentId).sort();
    const ranked = async (text: string) =>
      (await served.index.search(space, { text, topK: 10 })).map((m) => m.documentId);

    beforeAll(() =>
      served.index.upsert(
        space,
        texts.map((text, i) => chunk(`d${i}`, text)),
      ),
    );

    it('ranks the chunk holding an identifier whole above those sharing its parts', async () => {
      expect(await ranked('err connection reset peer socket retried')).toEqual(['d1', 'd0']);
      expect(await ranked('ERR_CONNECTION_RESET peer socket retried')).toEqual(['d0', 'd1']);
      expect(await ranked('foo.bar()')).toEqual(['d2']);
    });

    it('applies phrases, AND, OR, NOT and -term', async () => {
      expect(await ids('"connection reset"')).toEqual(['d0', 'd1']);
      expect(await ids('"reset connection"')).toEqual([]);
      expect(await ids('cache AND memory')).toEqual(['d4', 'd5']);
      expect(await ids('cache memory -postgres')).toEqual(['d2', 'd3', 'd4']);
      expect(await ids('cache NOT (redis OR postgres)')).toEqual(['d2', 'd3']);
      expect(await ids('+ERR_CONNECTION_RESET peer socket')).toEqual(['d0']);
      expect(await ids('-cache')).toEqual([]);
    });

    it('ranks the same without the texts, and sends none', async () => {
      const query = { text: 'cache memory', topK: 10, principals: ['user:u'] };
      const full = await served.index.search(space, query);
      expect(full.length).toBeGreaterThan(1);
      expect(await served.index.search(space, { ...query, withText: false })).toEqual(
        full.map((m) => ({ ...m, title: '', text: '' })),
      );
    });
  });

  it('keeps no chunk text in Pinecone: the sparse records carry ids, offsets and filter fields', async () => {
    const space = toIndexSpace(`rows-${randomUUID().slice(0, 8)}`);
    const doc = randomUUID();
    await served.index.upsert(space, [chunk(doc, 'Quarterly secrets of the board.')]);
    const stored = fake.stored(space, `${doc}#1#0`);
    expect(stored?.values).toEqual([]);
    expect(stored?.sparseValues?.indices.length).toBeGreaterThan(0);
    expect(Object.keys(stored?.metadata ?? {}).sort()).toEqual(
      [
        'chunkIndex',
        'documentId',
        'documentVersion',
        'endOffset',
        'kbIds',
        'principals',
        'startOffset',
        'tags',
        'uploadedAt',
      ].sort(),
    );
  });

  it('reports documents either side holds, so the orphan sweep finds sparse records without rows', async () => {
    const space = toIndexSpace(`orphan-${randomUUID().slice(0, 8)}`);
    const [kept, orphan] = [randomUUID(), randomUUID()];
    await served.index.upsert(space, [chunk(kept, 'Kept rows.'), chunk(orphan, 'Orphan rows.')]);
    // The rows go, the sparse record stays: a write that raced a delete.
    await served.metadata.deleteDocument(space, orphan);
    const listed = [];
    for await (const entry of served.index.documentVersions(space)) listed.push(entry);
    expect(listed).toEqual(
      [kept, orphan].sort().map((documentId) => ({ documentId, versions: [1] })),
    );
    await served.index.deleteDocument(space, orphan);
    expect(fake.stored(space, `${orphan}#1#0`)).toBeUndefined();
    expect(fake.stored(space, `${kept}#1#0`)).toBeDefined();
  });

  it('caps a chunk of more than 1,000 distinct lexemes at Pinecone’s limit, keeping it searchable', async () => {
    const space = toIndexSpace(`cap-${randomUUID().slice(0, 8)}`);
    const doc = randomUUID();
    const words = Array.from({ length: 1200 }, (_, i) => `zq${i.toString(36)}x`);
    await served.index.upsert(space, [chunk(doc, words.join(' '))]);
    expect(fake.stored(space, `${doc}#1#0`)?.sparseValues?.indices.length).toBe(1000);
    expect(await served.index.search(space, { text: 'zq0x zq1x', topK: 5 })).toHaveLength(1);
  });

  it('keeps the ACL in step: a revoked reader finds nothing, a stale read re-grants nobody (M8)', async () => {
    const space = toIndexSpace(`acl-${randomUUID().slice(0, 8)}`);
    const doc = randomUUID();
    await served.index.upsert(space, [
      chunk(doc, 'Secret merger plans.', ['u:owner', 'u:mallory']),
    ]);
    const readable = async (principal: string) =>
      (await served.index.search(space, { text: 'merger', topK: 5, principals: [principal] }))
        .length;
    expect(await readable('u:mallory')).toBe(1);
    try {
      fake.lagReads();
      await served.index.setPrincipals(space, doc, ['u:owner']);
      expect(await readable('u:mallory')).toBe(0);
      await served.index.setAttributes(
        space,
        doc,
        { knowledgeBaseIds: [], tags: ['x'], metadata: {} },
        ['u:owner'],
      );
      expect(await readable('u:mallory')).toBe(0);
      expect(await readable('u:owner')).toBe(1);
    } finally {
      fake.catchUp();
    }
    expect(await served.index.deleteDocument(space, doc)).toBe(1);
    expect(fake.stored(space, `${doc}#1#0`)).toBeUndefined();
    expect(await readable('u:owner')).toBe(0);
  });
});

const apiKey = process.env['PINECONE_API_KEY'];
const sparseHost = process.env['PINECONE_SPARSE_INDEX_HOST'];
const real = apiKey && sparseHost ? describe : describe.skip;
if (!apiKey || !sparseHost) {
  process.stdout.write(
    'PineconeLexicalIndex against real Pinecone: SKIPPED (set PINECONE_API_KEY and PINECONE_SPARSE_INDEX_HOST of a sparse index)\n',
  );
}

real('PineconeLexicalIndex against real Pinecone', () => {
  const { metadata, migrate, drop } = throwAwayMetadata();
  let index: PineconeLexicalIndex;
  beforeAll(async () => {
    await migrate();
    index = new PineconeLexicalIndex({
      apiKey: apiKey ?? '',
      indexHost: sparseHost ?? '',
      metadata,
      encoder: referenceEncoder(),
    });
  });
  afterAll(drop);
  lexicalIndexConformance(() => index, 'reference');
});
