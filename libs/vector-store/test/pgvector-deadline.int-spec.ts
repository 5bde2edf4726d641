import { randomUUID } from 'node:crypto';

import { toIndexSpace } from '@kb/contracts';
import { Client } from 'pg';

import { PgVectorStore } from '../src';
import { DIM } from './support/conformance';

jest.setTimeout(60_000);

/**
 * The search deadline reaches Postgres (docs/adr/0042): with the namespace's partition locked, a
 * query whose signal aborts rejects at once with its reason, and its statement is cancelled, not
 * left waiting on the lock. The end-to-end suite checks the same through query-service.
 */
describe('PgVectorStore query deadline', () => {
  const store = new PgVectorStore({ url: process.env['VECTOR_DATABASE_URL']! });
  const admin = new Client({ connectionString: process.env['VECTOR_DATABASE_URL']! });
  const space = toIndexSpace(`t-${randomUUID().slice(0, 8)}`);
  const documentId = randomUUID();
  const vector = Array.from({ length: DIM }, (_, i) => (i === 0 ? 1 : 0));
  let partition = '';

  beforeAll(async () => {
    await store.ensureReady(DIM);
    await admin.connect();
    await store.upsert(space, [
      {
        documentId,
        documentVersion: 1,
        chunkIndex: 0,
        vector,
        title: 'Title',
        text: 'Some text',
        startOffset: 0,
        endOffset: 9,
        attributes: { knowledgeBaseIds: [], tags: [], metadata: {}, uploadedAt: 0, principals: [] },
      },
    ]);
    const { rows } = await admin.query<{ part: string }>(
      `SELECT tableoid::regclass::text AS part FROM kb_vectors_${DIM} WHERE namespace = $1 LIMIT 1`,
      [space],
    );
    partition = rows[0]!.part;
  });

  afterAll(async () => {
    await admin.query('ROLLBACK').catch(() => undefined);
    await store.deleteDocuments(space, [documentId]);
    await admin.end();
    await store.close();
  });

  const waitingOnPartition = async (): Promise<number> => {
    const { rows } = await admin.query<{ n: string }>(
      'SELECT count(*) AS n FROM pg_locks WHERE relation = $1::regclass AND NOT granted',
      [partition],
    );
    return Number(rows[0]!.n);
  };

  it('rejects at the deadline and cancels the statement waiting on the lock', async () => {
    await admin.query('BEGIN');
    await admin.query(`LOCK TABLE ${partition} IN ACCESS EXCLUSIVE MODE`);
    const started = performance.now();
    await expect(
      store.query(space, { vector, topK: 1, signal: AbortSignal.timeout(200) }),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - started).toBeLessThan(200 + 100);
    for (let i = 0; i < 50 && (await waitingOnPartition()) > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await waitingOnPartition()).toBe(0);
    await admin.query('ROLLBACK');

    const [match] = await store.query(space, {
      vector,
      topK: 1,
      signal: AbortSignal.timeout(5000),
    });
    expect(match).toMatchObject({ documentId, text: 'Some text' });
  });
});
