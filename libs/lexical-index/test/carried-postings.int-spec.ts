import { randomUUID } from 'node:crypto';

import { toIndexSpace } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { sql } from 'kysely';

import {
  lexicalIndexMigrations,
  type LexicalMatch,
  type LexicalQuery,
  type LexicalWrite,
  type PgLexicalIndex,
  SnapshotLexicalIndex,
} from '../src';
import { BumpingPgIndex } from './support/bumping-pg-index';

jest.setTimeout(30_000);

/** Records which lexemes' postings and which chunks' term vectors the snapshots read. */
class CountingPgIndex extends BumpingPgIndex {
  postingReads: string[][] = [];
  vectorReads: string[][] = [];

  override postingsOf(...args: Parameters<PgLexicalIndex['postingsOf']>) {
    this.postingReads.push([...args[1]].sort());
    return super.postingsOf(...args);
  }

  override termVectors(...args: Parameters<PgLexicalIndex['termVectors']>) {
    this.vectorReads.push(args[1].map((c) => `${c.documentId}#${c.documentVersion}`));
    return super.termVectors(...args);
  }
}

/**
 * A snapshot built after a write takes the last one's posting lists over (docs/adr/0061): real
 * Postgres, each search compared with Postgres' own BM25, and the reads counted.
 */
describe('SnapshotLexicalIndex across generations', () => {
  const schema = `lexical_carry_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const url = process.env['DATABASE_URL']!;
  const pg = new CountingPgIndex({ url, schema });
  const space = toIndexSpace(`carry-${randomUUID().slice(0, 8)}`);
  const vocabulary = ['harbour', 'crane', 'ship', 'quay', 'cargo', 'tide', 'pilot', 'berth'];
  let seed = 11;
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const pick = <T>(values: T[]): T => values[Math.floor(random() * values.length)]!;
  const chunks = (documentId: string, documentVersion: number, principals: string[]) =>
    Array.from({ length: 3 }, (_, chunkIndex): LexicalWrite => {
      const text = Array.from({ length: 4 + Math.floor(random() * 20) }, () =>
        pick(vocabulary),
      ).join(' ');
      return {
        documentId,
        documentVersion,
        chunkIndex,
        title: '',
        text,
        startOffset: chunkIndex * 200,
        endOffset: chunkIndex * 200 + text.length,
        attributes: { knowledgeBaseIds: [], tags: [], metadata: {}, uploadedAt: 0, principals },
      };
    });
  const queries: LexicalQuery[] = [
    { text: 'harbour crane', topK: 10 },
    { text: 'ship cargo tide', topK: 10, principals: ['group:a'] },
    { text: 'pilot berth quay', topK: 10, principals: ['group:b', 'user:z'] },
  ];
  const index = new SnapshotLexicalIndex(pg, {
    generation: async () => pg.generation,
    waitForSnapshot: true,
  });
  const withoutScore = ({ score: _score, ...rest }: LexicalMatch) => rest;

  /** Every query ranked as Postgres ranks it; returns the posting reads the searches made. */
  async function searchAll(): Promise<string[][]> {
    pg.postingReads = [];
    for (const query of queries) {
      const [expected, actual] = [await pg.search(space, query), await index.search(space, query)];
      expect(actual.map(withoutScore)).toEqual(expected.map(withoutScore));
      actual.forEach((match, i) => expect(match.score).toBeCloseTo(expected[i]!.score, 10));
    }
    const reads = pg.postingReads;
    pg.postingReads = [];
    return reads;
  }

  beforeAll(async () => {
    const pool = createPool({ url, schema, maxConnections: 1 });
    await migrateToLatest(createDatabase(pool), schema, lexicalIndexMigrations);
    await pool.end();
    const principals = [['group:a'], ['group:b'], ['user:z'], ['group:a', 'group:b']];
    await pg.upsert(
      space,
      Array.from({ length: 20 }, (_, d) =>
        chunks(`doc-${String(d).padStart(2, '0')}`, 1, principals[d % 4]!),
      ).flat(),
    );
  });

  afterAll(async () => {
    await pg.close();
    const pool = createPool({ url, schema: 'public', maxConnections: 1 });
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(createDatabase(pool));
    await pool.end();
  });

  it('reads each lexeme cold once, then carries it through new versions, new documents, removals and ACL changes', async () => {
    const cold = await searchAll();
    expect(cold.flat().sort()).toEqual([...vocabulary].sort());
    expect(await searchAll()).toEqual([]);

    const writes: Array<[string, () => Promise<unknown>, string[]]> = [
      ['a new document', () => pg.upsert(space, chunks('doc-new', 1, ['group:a'])), ['doc-new#1']],
      [
        'a new version',
        async () => {
          await pg.upsert(space, chunks('doc-03', 2, ['user:z']));
          await pg.deleteDocument(space, 'doc-03', 2);
        },
        ['doc-03#2'],
      ],
      ['a removal', () => pg.deleteDocument(space, 'doc-07'), []],
      // The chunks' readers change, not their postings: they are carried, and read anew.
      ['an ACL change', () => pg.setPrincipals(space, 'doc-01', ['group:a']), []],
    ];
    for (const [change, write, added] of writes) {
      pg.vectorReads = [];
      await write();
      expect([change, await searchAll()]).toEqual([change, []]);
      expect([change, [...new Set(pg.vectorReads.flat())]]).toEqual([change, added]);
    }
  });

  it('reads its lists cold when the new chunks’ postings cannot be read at the build', async () => {
    class Failing extends CountingPgIndex {
      override termVectors(): never {
        throw new Error('the postings of the new chunks are unreadable');
      }
    }
    const failing = new Failing({ url, schema });
    const told: string[] = [];
    const cold = new SnapshotLexicalIndex(failing, {
      generation: async () => pg.generation,
      waitForSnapshot: true,
      onCarryFailed: (failed, error) => told.push(`${failed}: ${String(error)}`),
    });
    try {
      const query = queries[2]!;
      await cold.search(space, query);
      await pg.upsert(space, chunks('doc-late', 1, ['group:b']));
      failing.postingReads = [];
      const expected = (await pg.search(space, query)).map(withoutScore);
      expect((await cold.search(space, query)).map(withoutScore)).toEqual(expected);
      expect(failing.postingReads).toEqual([['berth', 'pilot', 'quay']]);
      // The first snapshot had nothing to carry; the second's failed read is told.
      expect(told).toEqual([`${space}: Error: the postings of the new chunks are unreadable`]);
    } finally {
      await failing.close();
    }
  });

  it('has a search on a space whose last snapshot was large wait for the next one, not go to Postgres', async () => {
    const paths = { memory: 0, index: 0 };
    const behind = (waitForBuildFrom: number) =>
      new SnapshotLexicalIndex(pg, {
        generation: async () => pg.generation,
        waitForBuildFrom,
        onSearch: (path) => paths[path]++,
        // A clock that stands still: every build took 0 ms, so none waits out a backoff.
        now: () => 0,
      });
    const size = (await pg.spaceChunks(space)).length;
    const large = behind(size);
    const small = behind(size + 1);
    for (const index of [large, small]) {
      // No snapshot yet: Postgres answers while the first is built.
      await index.search(space, queries[0]!);
      for (let i = 0; i < 100 && paths.memory === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        await index.search(space, queries[0]!);
      }
      expect(paths.memory).toBeGreaterThan(0);
      paths.memory = 0;
    }
    expect(paths.index).toBe(2);
    await pg.setPrincipals(space, 'doc-02', ['group:b']);
    const expected = (await pg.search(space, queries[1]!)).map(withoutScore);
    expect((await large.search(space, queries[1]!)).map(withoutScore)).toEqual(expected);
    expect(paths).toEqual({ memory: 1, index: 2 });
    expect((await small.search(space, queries[1]!)).map(withoutScore)).toEqual(expected);
    expect(paths).toEqual({ memory: 1, index: 3 });
  });

  it('hands what it holds to a new process, which takes it up before its first search', async () => {
    const first = new SnapshotLexicalIndex(pg, {
      generation: async () => pg.generation,
      waitForSnapshot: true,
    });
    expect(first.warmSet({ spaces: 8, lexemes: 100 })).toEqual([]);
    await first.search(space, queries[0]!);
    await first.search(space, queries[2]!);
    // A write: the next snapshot carries the lists, and the set still names them.
    await pg.upsert(space, chunks('doc-warm', 1, ['group:a']));
    await first.search(space, queries[1]!);
    const [held, ...others] = first.warmSet({ spaces: 8, lexemes: 100 });
    expect(others).toEqual([]);
    expect(held!.space).toBe(space);
    // The most recently used first: the last search's lexemes, then the earlier ones'.
    expect(new Set(held!.lexemes.slice(0, 3))).toEqual(new Set(['cargo', 'ship', 'tide']));
    expect(new Set(held!.lexemes)).toEqual(
      new Set(['cargo', 'ship', 'tide', 'berth', 'pilot', 'quay', 'crane', 'harbour']),
    );
    expect(first.warmSet({ spaces: 8, lexemes: 2 })[0]!.lexemes).toHaveLength(2);

    // Without `waitForSnapshot` a new process's first search would go to Postgres.
    const paths: string[] = [];
    const next = new SnapshotLexicalIndex(pg, {
      generation: async () => pg.generation,
      onSearch: (path) => paths.push(path),
    });
    pg.postingReads = [];
    expect(await next.warm(held!.space, held!.lexemes)).toBe(true);
    expect(pg.postingReads.flat().sort()).toEqual([...held!.lexemes].sort());
    pg.postingReads = [];
    for (const query of queries) {
      const expected = (await pg.search(space, query)).map(withoutScore);
      expect((await next.search(space, query)).map(withoutScore)).toEqual(expected);
    }
    expect(paths).toEqual(['memory', 'memory', 'memory']);
    expect(pg.postingReads).toEqual([]);
    // A space with no chunks (a tenant deleted since) is held, but not handed on.
    expect(
      await next.warm(toIndexSpace(`carry-empty-${randomUUID().slice(0, 8)}`), ['crane']),
    ).toBe(true);
    expect(next.warmSet({ spaces: 8, lexemes: 100 }).map((held) => held.space)).toEqual([space]);

    // A space it cannot hold is not warmed.
    const small = new SnapshotLexicalIndex(pg, {
      generation: async () => pg.generation,
      maxChunks: 1,
    });
    expect(await small.warm(space, ['crane'])).toBe(false);
  });
});
