import { randomUUID } from 'node:crypto';

import type { Access } from '@kb/auth';
import { type DocumentEvent, toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import type { NewDocument } from '../src/documents/document.model';
import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import { ACCESS_PAGE } from '../src/reconciliation/access.reconciler';
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

  /** The ids of the documents sent since the last call, sorted. */
  const sentIds = async () => {
    const ids = (await snapshots()).flatMap((s) =>
      s.payload.kind === 'access_snapshot' ? s.payload.documents.map((d) => d.documentId) : [],
    );
    await db.deleteFrom('outbox').execute();
    return ids.sort();
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

  it('sends only what changed since the last pass, less an interval, and everything once per full interval', async () => {
    const held = (await db.selectFrom('documents').select('id').execute()).map((r) => r.id);
    // 10:01 was the last pass (full at 10:00): this one sends what changed from 10:00 on.
    now = new Date('2026-11-24T10:05:00Z');
    expect(await service.accessReconciler.reconcile()).toBe(held.length);
    await sentIds();

    now = new Date('2026-11-24T10:07:00Z');
    const added = await insert(t2, 'zoe');
    const changed = held[0]!;
    await db.updateTable('documents').set({ updated_at: now }).where('id', '=', changed).execute();
    await db.deleteFrom('outbox').execute();
    now = new Date('2026-11-24T10:08:00Z');
    // Changed since 10:04 (the pass at 10:05, less an interval): the new document and the edited one.
    expect(await service.accessReconciler.reconcile()).toBe(2);
    expect(await sentIds()).toEqual([added.id, changed].sort());

    // Ten minutes after the full pass at 10:00, every document again.
    now = new Date('2026-11-24T10:10:30Z');
    expect(await service.accessReconciler.reconcile()).toBe(held.length + 1);
    expect(await sentIds()).toEqual([...held, added.id].sort());
    now = new Date('2026-11-24T10:12:00Z');
    expect(await service.accessReconciler.reconcile()).toBe(0);

    // RECONCILE_FULL_INTERVAL_MS=0: every pass sends every document, as before.
    const always = service.accessReconcilerWith({
      ACCESS_RECONCILE_INTERVAL_MS: 60_000,
      RECONCILE_FULL_INTERVAL_MS: 0,
      ACCESS_RECONCILE_RATE: 0,
    });
    now = new Date('2026-11-24T10:14:00Z');
    expect(await always.reconcile()).toBe(held.length + 1);
  });

  describe('a full pass at a pace', () => {
    const fullRow = () =>
      db
        .selectFrom('reconciliation_runs')
        .select(['resume_after', 'progressed_at'])
        .where('name', '=', 'access-full')
        .executeTakeFirstOrThrow();
    const paced = (perSecond: number) =>
      service.accessReconcilerWith({
        ACCESS_RECONCILE_INTERVAL_MS: 60_000,
        RECONCILE_FULL_INTERVAL_MS: 600_000,
        ACCESS_RECONCILE_RATE: perSecond,
      });
    let ids: string[];

    beforeAll(async () => {
      // More documents than a page: copies of one, each with an id of its own.
      const [first] = await db.selectFrom('documents').select('id').limit(1).execute();
      await sql`INSERT INTO documents
        SELECT (jsonb_populate_record(d, jsonb_build_object('id', gen_random_uuid()))).*
        FROM documents d, generate_series(1, ${ACCESS_PAGE + 100}::int) WHERE d.id = ${first!.id}`.execute(
        db,
      );
      ids = (await db.selectFrom('documents').select('id').orderBy('id').execute()).map(
        (r) => r.id,
      );
      await db.deleteFrom('outbox').execute();
    });

    it('stops at a shutdown after the page it was sending, and a later pass resumes it from there', async () => {
      now = new Date('2026-11-24T11:00:00Z');
      const stopping = paced(1);
      const pass = stopping.reconcile();
      await stopping.beforeApplicationShutdown();
      // One page, then the pace's wait, cut short by the shutdown.
      expect(await pass).toBe(ACCESS_PAGE);
      expect(await sentIds()).toEqual(ids.slice(0, ACCESS_PAGE));
      expect((await fullRow()).resume_after).toBe(ids[ACCESS_PAGE - 1]);

      // Within an interval of its last page the pass is not taken over: changes only.
      now = new Date('2026-11-24T11:00:40Z');
      expect(await paced(0).reconcile()).toBe(0);

      // Past it, the next pass sends the rest and what changed among those already sent.
      now = new Date('2026-11-24T11:01:30Z');
      const edited = ids[3]!;
      await db.updateTable('documents').set({ updated_at: now }).where('id', '=', edited).execute();
      expect(await paced(0).reconcile()).toBe(ids.length - ACCESS_PAGE + 1);
      expect(await sentIds()).toEqual([edited, ...ids.slice(ACCESS_PAGE)].sort());
      expect((await fullRow()).resume_after).toBeNull();
      now = new Date('2026-11-24T11:02:30Z');
      expect(await paced(0).reconcile()).toBe(1);
      await sentIds();
    });

    it('a pass that made no progress for an interval is taken over, and its replica stops', async () => {
      now = new Date('2026-11-24T11:20:00Z');
      const slow = paced(200);
      const pass = slow.reconcile();
      // The first page is sent; the slow replica waits 2.5 s before its second.
      for (let i = 0; i < 200 && (await fullRow()).resume_after !== ids[ACCESS_PAGE - 1]; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      now = new Date('2026-11-24T11:21:30Z');
      expect(await paced(0).reconcile()).toBe(ids.length - ACCESS_PAGE);
      // The slow replica's next page finds its claim taken and sends nothing more.
      expect(await pass).toBe(ACCESS_PAGE);
      expect(await sentIds()).toEqual(ids);
      expect((await fullRow()).resume_after).toBeNull();
    });

    it('a pass of changes that stops gives its claim back, so the next one reads from where it did', async () => {
      now = new Date('2026-11-24T11:30:00Z');
      await db.updateTable('documents').set({ updated_at: now }).execute();
      now = new Date('2026-11-24T11:30:10Z');
      expect(await paced(0).reconcile()).toBe(ids.length);
      await sentIds();
      now = new Date('2026-11-24T11:31:00Z');
      await db.updateTable('documents').set({ updated_at: now }).execute();
      now = new Date('2026-11-24T11:31:30Z');
      const stopping = paced(1);
      const pass = stopping.reconcile();
      await stopping.beforeApplicationShutdown();
      expect(await pass).toBe(ACCESS_PAGE);
      await sentIds();
      // At once, not half an interval later, and from the stopped pass's start: everything.
      now = new Date('2026-11-24T11:31:31Z');
      expect(await paced(0).reconcile()).toBe(ids.length);
    });
  });
});
