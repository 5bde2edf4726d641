import { randomUUID } from 'node:crypto';

import { migrateToLatest } from '@kb/database';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Pool } from 'pg';

import { PgVectorStore, vectorTableMigrations } from '../src';

jest.setTimeout(120_000);

/**
 * The partitioned layout (docs/adr/0029) takes over a table written in the layout before it:
 * every row moves into its namespace's partition, vectors inline, and the store reads them.
 * A dimension of its own (1000: a vector of 4 kB, which the old layout moved to TOAST), so its
 * table is this test's alone.
 */
describe('kb_vectors partitions migration', () => {
  const DIM = 1000;
  const table = `kb_vectors_${DIM}`;
  const history = { table: `${table}_migration` };
  const pool = new Pool({ connectionString: process.env['VECTOR_DATABASE_URL']!, max: 2 });
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  afterAll(() => db.destroy());

  it('moves existing vectors into one partition per namespace, stored inline, and serves them', async () => {
    await sql`DROP TABLE IF EXISTS ${sql.table(table)} CASCADE`.execute(db);
    await sql`DROP TABLE IF EXISTS ${sql.table(history.table)}`.execute(db);
    await sql`DROP TABLE IF EXISTS ${sql.table(`${history.table}_lock`)}`.execute(db);
    const all = vectorTableMigrations(DIM);
    const before = Object.fromEntries(
      Object.entries(all).filter(([name]) => name < '20261127T1200'),
    );
    await migrateToLatest(db, history, before);
    const isToasted = async (): Promise<boolean[]> =>
      (
        await sql<{ toasted: boolean }>`
          SELECT pg_column_toast_chunk_id(embedding) IS NOT NULL AS toasted
            FROM ${sql.table(table)}`.execute(db)
      ).rows.map((row) => row.toasted);
    const spaces = [`a-${randomUUID().slice(0, 6)}`, `b-${randomUUID().slice(0, 6)}~p1`];
    for (const [n, space] of spaces.entries()) {
      for (let i = 0; i < 3; i++) {
        const vector = `[${Array.from({ length: DIM }, (_, d) => (d === i ? 1 : 0.01 * n)).join(',')}]`;
        await sql`
          INSERT INTO ${sql.table(table)} (namespace, id, document_id, document_version, chunk_index,
                 title, text, start_offset, end_offset, embedding, principals)
          VALUES (${space}, ${`d${n}#1#${i}`}, ${`d${n}`}, 1, ${i}, 't', ${'x'.repeat(3000)}, 0, 1,
                  ${vector}::vector, ${['u:ann']}::text[])`.execute(db);
      }
    }

    expect(await isToasted()).toEqual(Array(6).fill(true));

    const store = new PgVectorStore({ url: process.env['VECTOR_DATABASE_URL']! });
    try {
      await store.ensureReady(DIM); // applies the partitions migration
      const { rows: parts } = await sql<{ n: string }>`
        SELECT count(*) AS n FROM pg_inherits WHERE inhparent = ${table}::regclass`.execute(db);
      expect(Number(parts[0]!.n)).toBe(2);
      const { rows: storage } = await sql<{ relkind: string; attstorage: string }>`
        SELECT c.relkind, a.attstorage FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
         WHERE a.attname = 'embedding'
           AND (a.attrelid = ${table}::regclass
                OR a.attrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = ${table}::regclass))`.execute(
        db,
      );
      expect(storage).toHaveLength(3);
      expect(storage.every((s) => s.attstorage === 'p')).toBe(true);
      // Inline: no embedding lives in TOAST any more (each did before: 4 kB each).
      const { rows: toasted } = await sql<{ inline: boolean }>`
        SELECT pg_column_toast_chunk_id(embedding) IS NULL AS inline FROM ${sql.table(table)}`.execute(
        db,
      );
      expect(toasted).toHaveLength(6);
      expect(toasted.every((row) => row.inline)).toBe(true);

      const [first, second] = spaces as [string, string];
      const unit = (i: number) => Array.from({ length: DIM }, (_, d) => (d === i ? 1 : 0));
      const matches = await store.query(first as never, {
        vector: unit(1),
        topK: 2,
        principals: ['u:ann'],
      });
      expect(matches.map((m) => [m.documentId, m.chunkIndex])).toEqual([
        ['d0', 1],
        expect.anything(),
      ]);
      expect(await store.countDocument(second as never, 'd1')).toBe(3);
      // A new namespace gets its partition at its first write.
      const third = `c-${randomUUID().slice(0, 6)}`;
      await store.upsert(third as never, [
        {
          documentId: 'd9',
          documentVersion: 1,
          chunkIndex: 0,
          vector: unit(2),
          title: 't',
          text: 'new',
          startOffset: 0,
          endOffset: 3,
          attributes: {
            knowledgeBaseIds: [],
            tags: [],
            metadata: {},
            uploadedAt: 0,
            principals: [],
          },
        },
      ]);
      expect((await store.query(third as never, { vector: unit(2), topK: 1 }))[0]?.documentId).toBe(
        'd9',
      );
    } finally {
      await store.close();
    }
  });
});
