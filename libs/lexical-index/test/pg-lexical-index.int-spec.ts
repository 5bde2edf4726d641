import { randomUUID } from 'node:crypto';

import { parseFilter, toIndexSpace } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { sql } from 'kysely';

import { lexicalIndexMigrations, type LexicalWrite, PgLexicalIndex } from '../src';
import { lexicalIndexConformance } from './support/conformance';

jest.setTimeout(30_000);

/** Real Postgres; this file migrates its own throw-away schema. */
describe('PgLexicalIndex', () => {
  const schema = `lexical_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const url = process.env['DATABASE_URL']!;
  const index = new PgLexicalIndex({ url, schema });

  beforeAll(async () => {
    const pool = createPool({ url, schema, maxConnections: 1 });
    await migrateToLatest(createDatabase(pool), schema, lexicalIndexMigrations);
    await pool.end();
  });

  afterAll(async () => {
    await index.close();
    const pool = createPool({ url, schema: 'public', maxConnections: 1 });
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(createDatabase(pool));
    await pool.end();
  });

  lexicalIndexConformance(() => index);

  it('has its postings and chunks vacuumed and analyzed after a fixed number of writes, not a share of the table', async () => {
    const pool = createPool({ url, schema, maxConnections: 1 });
    const { rows } = await pool.query<{ relname: string; reloptions: string[] }>(
      `SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname IN ('postings', 'chunks') ORDER BY c.relname`,
      [schema],
    );
    await pool.end();
    expect(rows).toEqual([
      {
        relname: 'chunks',
        reloptions: expect.arrayContaining([
          'autovacuum_vacuum_insert_scale_factor=0',
          'autovacuum_vacuum_insert_threshold=1000',
          'autovacuum_analyze_scale_factor=0',
          'autovacuum_analyze_threshold=1000',
        ]),
      },
      {
        relname: 'postings',
        reloptions: expect.arrayContaining([
          'autovacuum_vacuum_insert_scale_factor=0',
          'autovacuum_vacuum_insert_threshold=20000',
          'autovacuum_analyze_scale_factor=0',
          'autovacuum_analyze_threshold=20000',
        ]),
      },
    ]);
  });

  it("reads each chunk's term vector from its row as the postings hold it", async () => {
    const space = toIndexSpace(`tv-${randomUUID().slice(0, 8)}`);
    const texts = [
      'Caching caches the cached pages; a cache miss reads the pages again.',
      'The title words count too.',
      '!!! ---',
    ];
    await index.upsert(
      space,
      texts.map((text, i) => ({
        documentId: `d${i}`,
        documentVersion: 2,
        chunkIndex: i,
        title: i === 1 ? 'Counting words' : '',
        text,
        startOffset: 0,
        endOffset: text.length,
        attributes: { knowledgeBaseIds: [], tags: [], metadata: {}, uploadedAt: 0, principals: [] },
      })),
    );
    const refs = texts.map((_, i) => ({ documentId: `d${i}`, documentVersion: 2, chunkIndex: i }));
    const vectors = await index.termVectors(space, refs);
    const pool = createPool({ url, schema, maxConnections: 1 });
    const { rows } = await pool.query<{ key: string; lexeme: string; tf: number; doc_len: number }>(
      `SELECT document_id || '#' || document_version || '#' || chunk_index AS key, lexeme, tf, doc_len
         FROM postings WHERE tenant_id = $1`,
      [space],
    );
    await pool.end();
    const expected = new Map<string, { length: number; terms: Map<string, number> }>();
    for (const row of rows) {
      const vector = expected.get(row.key) ?? { length: row.doc_len, terms: new Map() };
      expected.set(row.key, vector);
      vector.terms.set(row.lexeme, row.tf);
    }
    // A chunk of punctuation has no lexeme, hence no vector; counts above 1 are kept.
    expect([...vectors.keys()].sort()).toEqual(['d0#2#0', 'd1#2#1']);
    expect(vectors).toEqual(expected);
    expect(vectors.get('d0#2#0')!.terms.get('cach')).toBeGreaterThan(1);
  });

  describe('the query language (phrases, operators, identifiers)', () => {
    const space = toIndexSpace(`q-${randomUUID().slice(0, 8)}`);
    const texts = [
      /* 0 */ 'The client failed with ERR_CONNECTION_RESET after the proxy closed the socket.',
      /* 1 */ 'A connection reset by the peer ends the socket; the error is retried.',
      /* 2 */ 'Call foo.bar() before the cache is warmed, then read the cache.',
      /* 3 */ 'The bar of the foo cache is warmed at boot.',
      /* 4 */ 'Redis keeps the cache in memory; eviction follows the LRU policy.',
      /* 5 */ 'The cache for sessions lives in Postgres, not in memory.',
    ];
    const chunk = (i: number): LexicalWrite => ({
      documentId: `d${i}`,
      documentVersion: 1,
      chunkIndex: 0,
      title: '',
      text: texts[i]!,
      startOffset: 0,
      endOffset: texts[i]!.length,
      attributes: {
        knowledgeBaseIds: ['kb1'],
        tags: i % 2 ? ['odd'] : [],
        metadata: {},
        uploadedAt: 0,
        principals: ['user:u'],
      },
    });
    const ids = async (text: string, extra: { filter?: object; principals?: string[] } = {}) =>
      (
        await index.search(space, {
          text,
          topK: 10,
          ...(extra.principals ? { principals: extra.principals } : {}),
          ...(extra.filter ? { filter: parseFilter(extra.filter)! } : {}),
        })
      )
        .map((m) => m.documentId)
        .sort();

    beforeAll(() =>
      index.upsert(
        space,
        texts.map((_, i) => chunk(i)),
      ),
    );

    it('ranks the same without reading the texts when none are asked for', async () => {
      const query = { text: 'cache memory', topK: 10, principals: ['user:u'] };
      const full = await index.search(space, query);
      const textless = await index.search(space, { ...query, withText: false });
      expect(full.length).toBeGreaterThan(1);
      expect(full.every((m) => m.text.length > 0)).toBe(true);
      expect(textless).toEqual(full.map((m) => ({ ...m, title: '', text: '' })));
    });

    const ranked = async (text: string) =>
      (await index.search(space, { text, topK: 10 })).map((m) => m.documentId);

    it('ranks the chunk that holds an identifier whole above those sharing only its parts', async () => {
      // d1 shares more of the words (connection, reset, peer, socket, retried) and outscores d0
      // on BM25 alone; d0 holds ERR_CONNECTION_RESET itself.
      expect(await ranked('err connection reset peer socket retried')).toEqual(['d1', 'd0']);
      expect(await ranked('ERR_CONNECTION_RESET peer socket retried')).toEqual(['d0', 'd1']);
      expect(await ranked('foo.bar()')).toEqual(['d2']);
      // Postgres reads foo.bar as one token, so plain words miss it
      expect(await ids('foo bar')).toEqual(['d3']);
    });

    it('requires an identifier typed with +, AND or OR', async () => {
      expect(await ids('+ERR_CONNECTION_RESET peer socket')).toEqual(['d0']);
      expect(await ids('ERR_CONNECTION_RESET AND socket')).toEqual(['d0']);
      expect(await ids('ERR_CONNECTION_RESET OR redis')).toEqual(['d0', 'd4']);
    });

    it('matches a quoted phrase in order, adjacent (stemmed)', async () => {
      // ERR_CONNECTION_RESET is err, connect, reset in a row to the stemmer: a phrase matches it
      expect(await ids('"connection reset"')).toEqual(['d0', 'd1']);
      expect(await ids('"connection reset" peer')).toEqual(['d0', 'd1']);
      expect(await ids('"reset connection"')).toEqual([]);
      expect(await ids('"cache is warmed" boot')).toEqual(['d2', 'd3']);
      expect(await ids('"warmed at boot"')).toEqual(['d3']);
    });

    it('applies AND, OR, NOT and -term; excluded terms do not score', async () => {
      expect(await ids('cache AND memory')).toEqual(['d4', 'd5']);
      expect(await ids('cache memory -postgres')).toEqual(['d2', 'd3', 'd4']);
      expect(await ids('cache NOT (redis OR postgres)')).toEqual(['d2', 'd3']);
      expect(await ids('redis OR socket')).toEqual(['d0', 'd1', 'd4']);
      expect(await ids('-cache')).toEqual([]); // nothing left to score
    });

    it('checks the constraint with the scope: ACL, knowledge bases and filters still apply', async () => {
      expect(await ids('cache AND memory', { principals: ['user:someone-else'] })).toEqual([]);
      expect(await ids('cache -redis', { filter: { tags: { $in: ['odd'] } } })).toEqual([
        'd3',
        'd5',
      ]);
    });

    it('degrades malformed syntax to words instead of failing', async () => {
      expect(await ids('"connection reset')).toEqual(['d0', 'd1']);
      expect(await ids('(cache OR redis')).toEqual(['d2', 'd3', 'd4', 'd5']);
      expect(await ids('cache AND')).toEqual(['d2', 'd3', 'd4', 'd5']);
    });
  });
});
