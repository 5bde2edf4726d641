import { randomUUID } from 'node:crypto';

import type { Access } from '@kb/auth';
import { type DocumentEvent, toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import type { NewDocument } from '../src/documents/document.model';
import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import { sqlDocumentService } from './support/sql-document-service';

jest.setTimeout(30_000);

/** Real Postgres, a throw-away schema; the clock is the test's. */
describe('AccessReconciler', () => {
  const schema = `access_reconcile_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const [t1, t2] = [toTenantId('t1'), toTenantId('t2')];
  let pool: Pool;
  let db: Kysely<DocumentDatabase>;
  let now = new Date('2026-11-24T10:00:00Z');
  let service: ReturnType<typeof sqlDocumentService>;

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 2 });
    db = createDatabase<DocumentDatabase>(pool);
    await migrateToLatest(db, schema, migrations);
    service = sqlDocumentService(db, () => now);
  });

  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  const insert = async (tenantId: typeof t1, ownerId = 'alice') => {
    const sha256 = randomUUID().replace(/-/g, '').padEnd(64, '0');
    const doc: NewDocument = {
      id: randomUUID(),
      tenantId,
      title: 'Doc',
      filename: 'doc.md',
      contentType: 'text/markdown',
      sizeBytes: 3,
      sha256,
      blobKey: `blobs/${tenantId}/sha256/${sha256}`,
      tags: [],
      knowledgeBaseIds: ['default'],
      ownerId,
      acl: { users: ['bob'], groups: [], roles: [], tenant: false },
      metadata: {},
      now,
    };
    await service.documents.register(doc, []);
    return doc;
  };
  const snapshots = async () => {
    const rows = await db.selectFrom('outbox').selectAll().orderBy('id').execute();
    return rows
      .map((row) => JSON.parse(row.payload) as { tenantId: string; payload: DocumentEvent })
      .filter((event) => event.payload.kind === 'access_snapshot')
      .map((event) => ({ key: event.tenantId, payload: event.payload }));
  };

  it('sends every document’s readers and meta version, per tenant, once per interval', async () => {
    const [a, b, c] = [await insert(t1), await insert(t1), await insert(t2, 'zoe')];
    const alice: Access = {
      tenantId: t1,
      userId: 'alice',
      principals: ['u:alice'],
      documentActions: new Set(['read', 'write', 'delete']),
      isAdmin: false,
    };
    await service.documents.setAcl(t1, alice, a.id, {
      users: [],
      groups: ['eng'],
      roles: [],
      tenant: false,
    });
    await db.deleteFrom('outbox').execute();

    expect(await service.accessReconciler.reconcile()).toBe(3);
    const sent = await snapshots();
    const entries = (tenant: string) =>
      sent
        .filter((s) => s.key === tenant)
        .flatMap((s) => (s.payload.kind === 'access_snapshot' ? s.payload.documents : []));
    expect(entries('t1')).toEqual(
      expect.arrayContaining([
        { documentId: a.id, principals: ['g:eng', 'u:alice'], metaVersion: 1 },
        { documentId: b.id, principals: ['u:alice', 'u:bob'], metaVersion: 0 },
      ]),
    );
    expect(entries('t1')).toHaveLength(2);
    expect(entries('t2')).toEqual([
      { documentId: c.id, principals: ['u:bob', 'u:zoe'], metaVersion: 0 },
    ]);

    // Another replica ticking within half an interval does not send everything again.
    await db.deleteFrom('outbox').execute();
    now = new Date(now.getTime() + 20_000);
    expect(await service.accessReconciler.reconcile()).toBeUndefined();
    expect(await snapshots()).toEqual([]);
    now = new Date(now.getTime() + 40_000);
    expect(await service.accessReconciler.reconcile()).toBe(3);
  });
});
