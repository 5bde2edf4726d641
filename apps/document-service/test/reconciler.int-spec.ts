import { randomUUID } from 'node:crypto';

import { DEFAULT_CHUNKER, pipelineOf, toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import type { NewDocument } from '../src/documents/document.model';
import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import type { Reconciler } from '../src/reconciliation/reconciler.service';
import { sqlDocumentService } from './support/sql-document-service';

jest.setTimeout(30_000);

/** Real Postgres, a throw-away schema; the clock is the test's. */
describe('Reconciler', () => {
  const schema = `reconcile_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const tenant = toTenantId('t1');
  const minute = 60_000;
  let pool: Pool;
  let db: Kysely<DocumentDatabase>;
  let now = new Date('2026-11-24T10:00:00Z');
  let service: ReturnType<typeof sqlDocumentService>;
  let reconciler: Reconciler;

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 2 });
    db = createDatabase<DocumentDatabase>(pool);
    await migrateToLatest(db, schema, migrations);
    service = sqlDocumentService(db, () => now, {
      STALLED_AFTER_MS: 15 * minute,
      RECONCILE_MAX_REDRIVES: 2,
    });
    reconciler = service.reconciler;
  });

  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  const insert = async (overrides: Partial<NewDocument> = {}) => {
    const sha256 = randomUUID().replace(/-/g, '').padEnd(64, '0');
    const doc: NewDocument = {
      id: randomUUID(),
      tenantId: tenant,
      title: 'Stalled',
      filename: 'stalled.md',
      contentType: 'text/markdown',
      sizeBytes: 7,
      sha256,
      blobKey: `blobs/sha256/${sha256}`,
      tags: ['ops'],
      knowledgeBaseIds: ['default'],
      ownerId: 'alice',
      acl: { users: [], groups: [], roles: [], tenant: true },
      metadata: { team: 'x' },
      now,
      ...overrides,
    };
    // A caller who can read nothing never gets a duplicate: this is always a new document.
    await service.documents.register(doc, []);
    await db.deleteFrom('outbox').execute(); // the relay published it; the pipeline then lost it
    return doc;
  };
  const outboxFor = async (id: string) =>
    (await db.selectFrom('outbox').selectAll().where('message_key', '=', id).execute()).map(
      (row) => JSON.parse(row.payload) as { tenantId: string; payload: Record<string, unknown> },
    );
  const rowOf = (id: string) =>
    db.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('sends a stalled version through the pipeline again, then fails it with reason stalled', async () => {
    const stalled = await insert();
    await db
      .updateTable('documents')
      .set({ status: 'embedding' })
      .where('id', '=', stalled.id)
      .execute();
    const fresh = await insert({ now: new Date(now.getTime() + 10 * minute) });

    now = new Date(now.getTime() + 16 * minute);
    const wakesBefore = service.relay.wakes; // registering woke it too
    expect(await reconciler.reconcile()).toEqual({
      redriven: [stalled.id],
      failed: [],
      membershipRepaired: [],
    });
    expect(service.relay.wakes).toBe(wakesBefore + 1);
    const [event] = await outboxFor(stalled.id);
    expect(event).toMatchObject({
      tenantId: 't1',
      payload: {
        kind: 'uploaded',
        documentId: stalled.id,
        version: 1,
        sha256: stalled.sha256,
        blob: { bucket: 'kb-documents', key: stalled.blobKey },
        attributes: { knowledgeBaseIds: ['default'], tags: ['ops'], metadata: { team: 'x' } },
      },
    });
    expect(await outboxFor(fresh.id)).toEqual([]); // not stalled yet
    expect(await rowOf(stalled.id)).toMatchObject({ status: 'embedding', redrives: 1 });

    // A re-drive resets the clock: nothing to do until it stalls again.
    expect(await reconciler.reconcile()).toEqual({
      redriven: [],
      failed: [],
      membershipRepaired: [],
    });

    now = new Date(now.getTime() + 16 * minute);
    const second = await reconciler.reconcile();
    expect(second.redriven).toEqual(expect.arrayContaining([stalled.id, fresh.id]));
    expect(await rowOf(stalled.id)).toMatchObject({ redrives: 2 });

    now = new Date(now.getTime() + 16 * minute);
    const third = await reconciler.reconcile();
    expect(third.failed).toEqual([stalled.id]);
    expect(third.redriven).toEqual([fresh.id]);
    expect(await rowOf(stalled.id)).toMatchObject({
      status: 'failed',
      failure_reason: 'stalled',
      failure_detail: 'no progress past "embedding" for 15 min after 2 re-drives',
    });
    expect((await rowOf(stalled.id)).stage_times).toHaveProperty('failed');
  });

  it('leaves finished documents alone', async () => {
    const done = await insert();
    await db
      .updateTable('documents')
      .set({ status: 'indexed' })
      .where('id', '=', done.id)
      .execute();
    now = new Date(now.getTime() + 60 * minute);
    const report = await reconciler.reconcile();
    expect(report.redriven).not.toContain(done.id);
    expect(report.failed).not.toContain(done.id);
    expect(await outboxFor(done.id)).toEqual([]);
  });

  it('repairs membership that no longer matches the tags and the tag rules', async () => {
    const tagged = await insert({ tags: ['ops', 'runbook'] });
    await insert({ tags: ['finance'] });
    // A rule written without its membership change (as if that transaction raced another).
    await db
      .insertInto('knowledge_bases')
      .values({
        tenant_id: tenant,
        id: 'operations',
        name: 'Operations',
        description: '',
        chunker: JSON.stringify({}),
        embedding_model: 'm',
        tag_rule: ['runbook'],
        created_at: now,
        updated_at: now,
      })
      .execute();
    expect((await reconciler.reconcile()).membershipRepaired).toEqual([tagged.id]);
    expect(await rowOf(tagged.id)).toMatchObject({
      knowledge_base_ids: ['default', 'operations'],
      explicit_knowledge_base_ids: ['default'],
    });
    // Its new knowledge base has a pipeline of its own (model "m"): the current version goes
    // through it, then the indexes learn the new membership and the spaces it is in.
    const operations = pipelineOf(tenant, DEFAULT_CHUNKER, 'm', {
      chunker: DEFAULT_CHUNKER,
      model: 'all-MiniLM-L6-v2',
    });
    expect(await outboxFor(tagged.id)).toEqual([
      expect.objectContaining({
        payload: expect.objectContaining({
          kind: 'uploaded',
          version: 1,
          pipelines: [
            expect.objectContaining({ space: tenant, knowledgeBaseIds: ['default'] }),
            { ...operations, knowledgeBaseIds: ['operations'] },
          ],
        }),
      }),
      expect.objectContaining({
        payload: {
          kind: 'attributes_changed',
          documentId: tagged.id,
          attributes: {
            knowledgeBaseIds: ['default', 'operations'],
            tags: ['ops', 'runbook'],
            metadata: { team: 'x' },
          },
          spaces: [tenant, operations.space],
          metaVersion: 1,
        },
      }),
    ]);
    expect((await reconciler.reconcile()).membershipRepaired).toEqual([]); // nothing left to do

    // The rule goes away: the document leaves the knowledge base again.
    await db
      .updateTable('knowledge_bases')
      .set({ tag_rule: [] })
      .where('id', '=', 'operations')
      .execute();
    expect((await reconciler.reconcile()).membershipRepaired).toEqual([tagged.id]);
    expect(await rowOf(tagged.id)).toMatchObject({ knowledge_base_ids: ['default'] });
  });

  it('looks for drift among what changed since its last look, and everywhere once per full interval', async () => {
    const looking = service.reconcilerWith({
      RECONCILE_INTERVAL_MS: minute,
      RECONCILE_FULL_INTERVAL_MS: 60 * minute,
      STALLED_AFTER_MS: 15 * minute,
      RECONCILE_MAX_REDRIVES: 2,
    });
    // Drift written by hand, as a lost write would leave it: the row's updated_at stays.
    const drift = (id: string) =>
      db
        .updateTable('documents')
        .set({ knowledge_base_ids: ['default', 'gone'] })
        .where('id', '=', id)
        .execute();
    now = new Date('2026-11-25T08:00:00Z');
    // Another tenant's: a look repairs every drifted document of a tenant it finds.
    const old = await insert({ tags: ['old'], tenantId: toTenantId('t2') });
    expect((await looking.reconcile()).membershipRepaired).toEqual([]); // the first look: everywhere
    now = new Date('2026-11-25T08:05:00Z');
    expect((await looking.reconcile()).membershipRepaired).toEqual([]);
    await drift(old.id);
    // Since 08:04 (the look at 08:05, less an interval): `old` last changed at 08:00.
    now = new Date('2026-11-25T08:10:00Z');
    expect((await looking.reconcile()).membershipRepaired).toEqual([]);
    now = new Date('2026-11-25T08:11:00Z');
    const fresh = await insert({ tags: ['fresh'] });
    await drift(fresh.id);
    now = new Date('2026-11-25T08:12:00Z');
    expect((await looking.reconcile()).membershipRepaired).toEqual([fresh.id]);
    // An hour after the first look, everywhere again.
    now = new Date('2026-11-25T09:01:00Z');
    expect((await looking.reconcile()).membershipRepaired).toEqual([old.id]);
  });
});
