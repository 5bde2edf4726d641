import { randomUUID } from 'node:crypto';

import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { sql } from 'kysely';

import { indexStateMigrations, PgDocumentIndexState, PgIndexGenerations } from '../src';
import { documentIndexStateConformance, indexGenerationsConformance } from './support/conformance';

jest.setTimeout(30_000);

/** Real Postgres; this file migrates its own throw-away schema. */
describe('Postgres index state', () => {
  const schema = `index_state_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const url = process.env['DATABASE_URL']!;
  const generations = new PgIndexGenerations({ url, schema });
  const state = new PgDocumentIndexState({ url, schema });

  beforeAll(async () => {
    const pool = createPool({ url, schema, maxConnections: 1 });
    await migrateToLatest(createDatabase(pool), schema, indexStateMigrations);
    await pool.end();
  });

  afterAll(async () => {
    await Promise.all([generations.close(), state.close()]);
    const pool = createPool({ url, schema: 'public', maxConnections: 1 });
    await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(createDatabase(pool));
    await pool.end();
  });

  describe('PgIndexGenerations', () => indexGenerationsConformance(() => generations));
  describe('PgDocumentIndexState', () => documentIndexStateConformance(() => state));
});
