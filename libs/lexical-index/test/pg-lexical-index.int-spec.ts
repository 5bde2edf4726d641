import { randomUUID } from 'node:crypto';

import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { sql } from 'kysely';

import { lexicalIndexMigrations, PgLexicalIndex } from '../src';
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
});
