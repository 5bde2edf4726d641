import { randomUUID } from 'node:crypto';

import { toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import type { DocumentAcl, NewDocument } from '../src/documents/document.model';
import { EndedGrantsRepository } from '../src/grants/ended-grants.repository';
import { GrantExpiryService } from '../src/grants/grant-expiry.service';
import { migrations } from '../src/migrations';
import { SqlOutboxRepository } from '../src/outbox/outbox.repository';
import { OutboxWriter } from '../src/outbox/outbox.writer';
import type { DocumentDatabase } from '../src/platform/db.types';
import { sqlDocumentService } from './support/sql-document-service';

jest.setTimeout(60_000);

/** The ended-grant job over Postgres: which documents it finds, and the ACL it leaves (ADR 54). */
describe('ended document grants in SQL', () => {
  const schema = `grants_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const tenant = toTenantId('t1');
  let pool: Pool;
  let db: Kysely<DocumentDatabase>;
  let service: ReturnType<typeof sqlDocumentService>;
  let now = new Date('2026-11-22T10:00:00Z');

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 4 });
    db = createDatabase<DocumentDatabase>(pool);
    await migrateToLatest(db, schema, migrations);
    service = sqlDocumentService(db, () => now);
  });
  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  const add = async (acl: DocumentAcl) => {
    const sha256 = randomUUID().replace(/-/g, '').padEnd(64, '0');
    const doc: NewDocument = {
      id: randomUUID(),
      tenantId: tenant,
      title: 't',
      filename: 'a.md',
      contentType: 'text/markdown',
      sizeBytes: 10,
      sha256,
      blobKey: `blobs/${tenant}/sha256/${sha256}`,
      tags: [],
      knowledgeBaseIds: ['default'],
      ownerId: 'root',
      acl,
      metadata: {},
      now,
    };
    return (await service.documents.register(doc, [])).document.id;
  };
  const base = { users: ['bob', 'cy'], groups: ['eng'], roles: [], tenant: false };

  it('finds only documents with an ended entry, and strips it through the ACL change', async () => {
    const ending = await add({ ...base, until: { 'u:bob': '2026-11-22T11:00:00Z' } });
    const later = await add({ ...base, until: { 'g:eng': '2026-11-23T00:00:00Z' } });
    await add(base);
    const repository = new EndedGrantsRepository(db);
    expect(await repository.documentsWithEnded(now, 10)).toEqual([]);

    now = new Date('2026-11-22T11:00:00Z');
    expect(await repository.documentsWithEnded(now, 10)).toEqual([
      { tenantId: tenant, id: ending },
    ]);
    const job = new GrantExpiryService(
      repository,
      service.documentsRepository,
      service.transactions,
      new OutboxWriter(new SqlOutboxRepository(db)),
      service.relay,
      () => now,
    );
    expect(await job.run()).toBe(1);
    expect(await repository.documentsWithEnded(now, 10)).toEqual([]);
    const stripped = await service.documentsRepository.findById(tenant, ending, 'all');
    expect(stripped!.acl).toEqual({ users: ['cy'], groups: ['eng'], roles: [], tenant: false });
    expect(stripped!.principals).toEqual(['g:eng', 'u:cy', 'u:root']);
    const kept = await service.documentsRepository.findById(tenant, later, 'all');
    expect(kept!.principals).toEqual(
      ['u:bob', 'u:cy', 'u:root', 'x:g:eng@2026-11-23T00:00:00.000Z'].sort(),
    );
    const { rows } = await sql<{ actor: string }>`
      SELECT (payload::jsonb)->'payload'->>'actor' AS actor FROM outbox
      WHERE topic = 'kb.audit.v1' ORDER BY id DESC LIMIT 1`.execute(db);
    expect(rows[0]?.actor).toBe('system');
  });
});
