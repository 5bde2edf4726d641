import { randomUUID } from 'node:crypto';

import { toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import type { NewDocument } from '../src/documents/document.model';
import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import { SqlDocumentStatsRepository } from '../src/stats/document-stats-sql.repository';
import { sqlDocumentService } from './support/sql-document-service';

jest.setTimeout(30_000);

/** The grouped counts in Postgres: per knowledge base and status, within what a caller may read. */
describe('SqlDocumentStatsRepository', () => {
  const schema = `document_stats_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const tenant = toTenantId('t1');
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

  it('counts documents and chunks per knowledge base and status, only visible ones', async () => {
    const service = sqlDocumentService(db, () => new Date('2026-11-22T10:00:00Z'));
    const add = async (owner: string, knowledgeBaseIds: string[], tenantId = tenant) => {
      const sha256 = randomUUID().replace(/-/g, '').padEnd(64, '0');
      const doc: NewDocument = {
        id: randomUUID(),
        tenantId,
        title: 't',
        filename: 'a.md',
        contentType: 'text/markdown',
        sizeBytes: 1,
        sha256,
        blobKey: `blobs/${tenantId}/sha256/${sha256}`,
        tags: [],
        knowledgeBaseIds,
        ownerId: owner,
        acl: { users: [], groups: [], roles: [], tenant: false },
        metadata: {},
        now: new Date('2026-11-22T10:00:00Z'),
      };
      return (await service.documents.register(doc, [])).document.id;
    };
    const indexed = await add('alice', ['default', 'handbook']);
    await add('alice', ['handbook']);
    await add('bob', ['handbook']);
    await add('alice', ['default'], toTenantId('t2'));
    await service.documents.applyStatus(
      tenant,
      { documentId: indexed, version: 1, status: 'indexed', chunkCount: 7 },
      new Date(),
    );
    const stats = new SqlDocumentStatsRepository(db);

    expect(await stats.countByKnowledgeBase(tenant, ['u:alice'])).toEqual([
      { knowledgeBaseId: 'default', status: 'indexed', documents: 1, chunks: 7 },
      { knowledgeBaseId: 'handbook', status: 'indexed', documents: 1, chunks: 7 },
      { knowledgeBaseId: 'handbook', status: 'pending', documents: 1, chunks: 0 },
    ]);
    expect(await stats.countByStatus(tenant, ['u:alice'])).toEqual([
      { status: 'indexed', documents: 1, chunks: 7 },
      { status: 'pending', documents: 1, chunks: 0 },
    ]);
    expect(await stats.countByStatus(tenant, 'all')).toEqual([
      { status: 'indexed', documents: 1, chunks: 7 },
      { status: 'pending', documents: 2, chunks: 0 },
    ]);
    expect(await stats.countByStatus(tenant, ['u:mallory'])).toEqual([]);
  });
});
