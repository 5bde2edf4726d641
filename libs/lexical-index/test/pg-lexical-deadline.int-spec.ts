import { randomUUID } from 'node:crypto';

import { toIndexSpace } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { sql } from 'kysely';
import { Client } from 'pg';

import { lexicalIndexMigrations, PgLexicalIndex } from '../src';

jest.setTimeout(30_000);

/**
 * The search deadline reaches Postgres (docs/adr/0042): with the chunks table locked, a BM25
 * search whose signal aborts rejects at once with its reason, and its statement is cancelled, not
 * left waiting on the lock. The end-to-end suite checks the vector side through query-service.
 */
describe('PgLexicalIndex search deadline', () => {
  const schema = `lexical_deadline_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const url = process.env['DATABASE_URL']!;
  const index = new PgLexicalIndex({ url, schema });
  const admin = new Client({ connectionString: url });
  const space = toIndexSpace(`t-${randomUUID().slice(0, 8)}`);
  const documentId = randomUUID();

  beforeAll(async () => {
    const pool = createPool({ url, schema, maxConnections: 1 });
    await migrateToLatest(createDatabase(pool), schema, lexicalIndexMigrations);
    await pool.end();
    await admin.connect();
    await index.upsert(space, [
      {
        documentId,
        documentVersion: 1,
        chunkIndex: 0,
        title: 'Orbits',
        text: 'A Hohmann transfer moves a spacecraft between two orbits.',
        startOffset: 0,
        endOffset: 58,
        attributes: { knowledgeBaseIds: [], tags: [], metadata: {}, uploadedAt: 0, principals: [] },
      },
    ]);
  });

  afterAll(async () => {
    await admin.query('ROLLBACK').catch(() => undefined);
    await index.close();
    const pool = createPool({ url, schema: 'public', maxConnections: 1 });
    await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(createDatabase(pool));
    await pool.end();
    await admin.end();
  });

  const waitingOnChunks = async (): Promise<number> => {
    const { rows } = await admin.query<{ n: string }>(
      'SELECT count(*) AS n FROM pg_locks WHERE relation = $1::regclass AND NOT granted',
      [`${schema}.chunks`],
    );
    return Number(rows[0]!.n);
  };

  it('rejects at the deadline and cancels the statement waiting on the lock', async () => {
    await admin.query('BEGIN');
    await admin.query(`LOCK TABLE ${schema}.chunks IN ACCESS EXCLUSIVE MODE`);
    const started = performance.now();
    await expect(
      index.search(space, { text: 'Hohmann transfer', topK: 5, signal: AbortSignal.timeout(200) }),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - started).toBeLessThan(200 + 100);
    for (let i = 0; i < 50 && (await waitingOnChunks()) > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await waitingOnChunks()).toBe(0);
    await admin.query('ROLLBACK');

    const [match] = await index.search(space, { text: 'Hohmann transfer', topK: 5 });
    expect(match).toMatchObject({ documentId, title: 'Orbits' });
  });
});
