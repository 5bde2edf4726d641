import { randomUUID } from 'node:crypto';

import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import { SqlKnowledgeBasesRepository } from '../src/knowledge-bases/knowledge-bases-sql.repository';
import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import { SqlTransactionRunner } from '../src/platform/transaction.runner';
import { knowledgeBasesRepositoryConformance } from './support/knowledge-bases-repository.conformance';

jest.setTimeout(30_000);

/** Real Postgres, in a throw-away schema; `InMemoryKnowledgeBasesRepository` runs the same suite. */
describe('SqlKnowledgeBasesRepository', () => {
  const schema = `knowledge_bases_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let pool: Pool;
  let db: Kysely<DocumentDatabase>;

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 2 });
    db = createDatabase<DocumentDatabase>(pool);
    await migrateToLatest(db, schema, migrations);
  });
  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  knowledgeBasesRepositoryConformance(() => ({
    repository: new SqlKnowledgeBasesRepository(db),
    transactions: new SqlTransactionRunner(db),
  }));
});
