import { randomUUID } from 'node:crypto';

import { Topics } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import { migrations } from '../src/migrations';
import { SqlOutboxRepository } from '../src/outbox/outbox.repository';
import type { DocumentDatabase } from '../src/platform/db.types';
import { SqlTransactionRunner } from '../src/platform/transaction.runner';
import { outboxRepositoryConformance } from './support/outbox-repository.conformance';

jest.setTimeout(60_000);

/**
 * The outbox in Postgres: the conformance suite `InMemoryOutboxRepository` runs too, then the
 * lanes' index and one-statement units of work, which only SQL shows.
 */
describe('outbox in SQL', () => {
  const schema = `outbox_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let pool: Pool;
  let db: Kysely<DocumentDatabase>;
  let outbox: SqlOutboxRepository;
  let transactions: SqlTransactionRunner;
  /** The text of every statement the pool's connections sent, in order. */
  const sent: string[] = [];

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 4 });
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      client.query = ((...args: unknown[]) => {
        const [first] = args;
        sent.push(typeof first === 'string' ? first : String((first as { text?: string }).text));
        return query(...args);
      }) as typeof client.query;
    });
    db = createDatabase<DocumentDatabase>(pool);
    await migrateToLatest(db, schema, migrations);
    outbox = new SqlOutboxRepository(db);
    transactions = new SqlTransactionRunner(db);
  });
  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  outboxRepositoryConformance(() => ({ outbox, transactions }));

  const message = (topic: string, key: string) => ({ topic, key, payload: key, headers: {} });

  it('claims document events before audit records written earlier, each lane in order', async () => {
    await transactions.run((trx) =>
      outbox.insertMany(trx, [
        ...Array.from({ length: 500 }, (_, i) => message(Topics.audit, `audit-${i}`)),
        message(Topics.document, 'doc-1'),
        message(Topics.audit, 'audit-late'),
        message(Topics.document, 'doc-2'),
      ]),
    );
    const keys = async (limit: number) =>
      transactions.run(async (trx) => (await outbox.claim(trx, limit)).map((m) => m.key));
    expect(await keys(4)).toEqual(['doc-1', 'doc-2', 'audit-0', 'audit-1']);

    // The claim reads the lanes' index in order: no sort over the whole backlog.
    const plan = await sql<{ 'QUERY PLAN': string }>`
      EXPLAIN SELECT * FROM outbox ORDER BY (topic = ${sql.lit(Topics.audit)}), id
       LIMIT 100 FOR UPDATE SKIP LOCKED`.execute(db);
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toContain('outbox_lanes');
    expect(text).not.toMatch(/\bSort\b/);
  });

  it('writes a one-statement unit of work without BEGIN and COMMIT, visible at once', async () => {
    sent.length = 0;
    await transactions.statement((trx) => outbox.insert(trx, message(Topics.audit, 'read-1')));
    expect(sent).toEqual([expect.stringMatching(/^insert into "outbox"/)]);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM outbox WHERE message_key = 'read-1'`.execute(db);
    expect(rows[0]?.n).toBe(1);

    sent.length = 0;
    await transactions.run((trx) => outbox.insert(trx, message(Topics.audit, 'read-2')));
    expect(sent.map((text) => text.split(' ')[0]!.toLowerCase())).toEqual([
      'begin',
      'insert',
      'commit',
    ]);
  });
});
