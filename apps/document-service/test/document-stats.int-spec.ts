import { randomUUID } from 'node:crypto';

import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import { SqlDocumentStatsRepository } from '../src/stats/document-stats-sql.repository';
import { documentStatsConformance } from './support/document-stats.conformance';
import { sqlDocumentService } from './support/sql-document-service';

jest.setTimeout(30_000);

/** The grouped counts in Postgres; `InMemoryDocumentStatsRepository` runs the same suite. */
describe('SqlDocumentStatsRepository', () => {
  const schema = `document_stats_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
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

  documentStatsConformance(() => ({
    documents: sqlDocumentService(db, () => new Date('2026-11-22T10:00:00Z')).documents,
    stats: new SqlDocumentStatsRepository(db),
  }));
});
