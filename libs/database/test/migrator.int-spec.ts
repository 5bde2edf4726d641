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

describe('migrateToLatest beside schemas being dropped', () => {
  const prefix = `churn_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
  let pool: Pool;
  let db: Kysely<unknown>;

  beforeAll(() => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema: 'public', maxConnections: 8 });
    db = createDatabase<unknown>(pool);
  });

  afterAll(async () => {
    const { rows } = await sql<{ nspname: string }>`
      SELECT nspname FROM pg_namespace WHERE nspname LIKE ${`${prefix}%`}`.execute(db);
    for (const { nspname } of rows) {
      await sql`DROP SCHEMA IF EXISTS ${sql.raw(nspname)} CASCADE`.execute(db);
    }
    await pool.end();
  });

  // Other suites create and drop throw-away schemas while this one migrates (the CI failure
  // "schema source_syncs_… does not exist" in the reconciler's migrations).
  it('is not failed by another schema dropped while it looks for its history table', async () => {
    let churning = true;
    const churn = async (lane: number): Promise<number> => {
      let dropped = 0;
      while (churning) {
        const name = `${prefix}_c${lane}_${dropped}`;
        await sql`CREATE SCHEMA ${sql.raw(name)}`.execute(db);
        await sql`CREATE TABLE ${sql.raw(name)}.t (id serial, v text)`.execute(db);
        await sql`DROP SCHEMA ${sql.raw(name)} CASCADE`.execute(db);
        dropped += 1;
      }
      return dropped;
    };
    const churners = [churn(0), churn(1), churn(2)];
    const create = (schema: string): Migration => ({
      async up(db: Kysely<unknown>): Promise<void> {
        await sql`CREATE TABLE ${sql.raw(schema)}.things (id int)`.execute(db);
      },
    });
    try {
      for (let i = 0; i < 25; i++) {
        const schema = `${prefix}_m${i}`;
        const migrations = { '20261122T1600_create': create(schema) };
        expect((await migrateToLatest(db, schema, migrations)).applied).toEqual([
          '20261122T1600_create',
        ]);
      }
    } finally {
      churning = false;
    }
    expect((await Promise.all(churners)).every((n) => n > 0)).toBe(true);
  });
});
