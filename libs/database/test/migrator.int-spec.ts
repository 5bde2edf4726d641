import { randomUUID } from 'node:crypto';

import { type Kysely, type Migration, sql } from 'kysely';
import type { Pool } from 'pg';

import { createDatabase, createPool } from '../src/database';
import { migrateToLatest, pendingMigrations } from '../src/migrator';

jest.setTimeout(30_000);

const addColumn = (column: string): Migration => ({
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE things ADD COLUMN ${sql.raw(column)} int`.execute(db);
  },
});

/** Migrations over real Postgres, in a throw-away schema. */
describe('migrateToLatest', () => {
  const schema = `migrator_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  let pool: Pool;
  let db: Kysely<unknown>;

  beforeAll(() => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 2 });
    db = createDatabase<unknown>(pool);
  });

  afterAll(async () => {
    await sql`DROP SCHEMA IF EXISTS ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  it('applies a new migration that sorts before one already applied (dated when written)', async () => {
    const create: Migration = {
      async up(db: Kysely<unknown>): Promise<void> {
        await sql`CREATE TABLE things (id int)`.execute(db);
      },
    };
    const first = { '20261122T1600_create': create, '20261129T0900_later': addColumn('later') };
    expect((await migrateToLatest(db, schema, first)).applied).toEqual(Object.keys(first));
    // Written on the 26th, after a migration named for the 29th was applied.
    const next = { ...first, '20261126T1555_today': addColumn('today') };
    expect(await pendingMigrations(db, schema, next)).toEqual(['20261126T1555_today']);
    expect((await migrateToLatest(db, schema, next)).applied).toEqual(['20261126T1555_today']);
    expect(await pendingMigrations(db, schema, next)).toEqual([]);
    const { rows } = await sql<{ column_name: string }>`
      SELECT column_name FROM information_schema.columns
       WHERE table_schema = ${schema} AND table_name = 'things' ORDER BY column_name`.execute(db);
    expect(rows.map((r) => r.column_name)).toEqual(['id', 'later', 'today']);
  });
});
