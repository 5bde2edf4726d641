import { randomUUID } from 'node:crypto';

import type { Access } from '@kb/auth';
import { toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { leaseQueueConformance } from '@kb/jobs/test/support/lease-queue.conformance';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import type { NewDocument } from '../src/documents/document.model';
import type { ErasureRecord } from '../src/erasures/erasure.model';
import { ErasuresRepository } from '../src/erasures/erasures.repository';
import { placeHoldSchema } from '../src/holds/legal-hold.model';
import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import { sqlDocumentService } from './support/sql-document-service';

jest.setTimeout(120_000);

const tenant = toTenantId('t1');
const admin: Access = {
  tenantId: tenant,
  userId: 'root',
  principals: ['u:root'],
  documentActions: new Set(['read', 'write', 'delete']),
  isAdmin: true,
};
const days = (n: number) => n * 24 * 3600_000;

/** Legal holds and retention in Postgres: the hold conditions' SQL, the due date, the claim. */
describe('legal holds and retention in SQL', () => {
  const schema = `holds_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let pool: Pool;
  let db: Kysely<DocumentDatabase>;
  let service: ReturnType<typeof sqlDocumentService>;
  let now = new Date('2026-11-22T10:00:00Z');

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 6 });
    db = createDatabase<DocumentDatabase>(pool);
    await migrateToLatest(db, schema, migrations);
    service = sqlDocumentService(db, () => now);
  });
  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  const add = async (knowledgeBaseIds: string[], extra: Partial<NewDocument> = {}) => {
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
      knowledgeBaseIds,
      ownerId: 'root',
      acl: { users: [], groups: [], roles: [], tenant: false },
      metadata: {},
      now,
      ...extra,
    };
    return (await service.documents.register(doc, [])).document.id;
  };
  const place = (body: unknown) =>
    service.legalHolds.place(tenant, admin, placeHoldSchema.parse(body));
  const exists = async (id: string) =>
    (await service.documentsRepository.findById(tenant, id, 'all')) !== undefined;

  it('covers documents by id, knowledge base and filter, and names the hold', async () => {
    await service.knowledgeBases.create(tenant, admin, {
      id: 'legal',
      name: 'legal',
      description: '',
      tagRule: { anyOf: [] },
    });
    const byId = await add(['default']);
    const inKb = await add(['legal']);
    const tagged = await add(['default'], { tags: ['case-9'], metadata: { matter: 9 } });
    const free = await add(['default']);
    await place({ name: 'ids', documentIds: [byId] });
    await place({ name: 'kb', knowledgeBaseId: 'legal' });
    const filter = await place({ name: 'filter', where: { 'metadata.matter': { $gte: 9 } } });

    const held = await service.transactions.run((trx) =>
      service.holds.heldAmong(trx, tenant, [byId, inKb, tagged, free]),
    );
    expect(Object.fromEntries(held)).toEqual({ [byId]: 'ids', [inKb]: 'kb', [tagged]: 'filter' });
    await expect(service.documents.delete(tenant, admin, tagged)).rejects.toMatchObject({
      code: 'legal_hold',
    });
    expect(await service.legalHolds.get(tenant, admin, filter.id)).toMatchObject({
      heldDocuments: 1,
    });
    await service.legalHolds.release(tenant, admin, filter.id, 'settled');
    await service.documents.delete(tenant, admin, tagged);
    expect(await exists(tagged)).toBe(false);
  });

  it('deletes what is due by expiresAt or by policy, skipping held documents, and previews it', async () => {
    await service.knowledgeBases.create(tenant, admin, {
      id: 'short',
      name: 'short',
      description: '',
      tagRule: { anyOf: [] },
      retentionDays: 30,
    });
    await service.knowledgeBases.create(tenant, admin, {
      id: 'kept',
      name: 'kept',
      description: '',
      tagRule: { anyOf: [] },
    });
    const expiring = await add(['default']);
    await service.documents.setExpiry(tenant, admin, expiring, new Date(now.getTime() + 1000));
    const old = await add(['short']);
    const alsoKept = await add(['short', 'kept']);
    const heldOld = await add(['short']);
    await place({ name: 'Case 12', documentIds: [heldOld] });
    now = new Date(now.getTime() + days(31));

    const preview = await service.retention.preview(tenant, admin, 'short', 100);
    expect(preview.deletes.map((d) => d.id)).toEqual([old]);
    expect(preview.held).toEqual([
      expect.objectContaining({ id: heldOld, hold: 'Case 12', reason: 'legal_hold' }),
    ]);

    const deleted = await service.retention.runTenant(tenant, now);

    expect(deleted.map((d) => d.id).sort()).toEqual([expiring, old].sort());
    expect(await exists(alsoKept)).toBe(true);
    expect(await exists(heldOld)).toBe(true);
    // Two runs at once never delete a document twice, and the held one is never claimed.
    const again = await Promise.all([1, 2].map(() => service.retention.runTenant(tenant, now)));
    expect(again.flat()).toEqual([]);
  });

  it('erases what a user uploaded as one job, in batches, skipping and counting held documents', async () => {
    const mine = await Promise.all([1, 2, 3].map(() => add(['default'], { ownerId: 'mallory' })));
    const kept = await add(['default'], { ownerId: 'mallory', tags: ['evidence'] });
    const other = await add(['default'], { ownerId: 'trent' });
    await place({ name: 'Evidence', where: { tags: 'evidence' } });

    const job = await service.erasures.request(tenant, admin, { uploadedBy: 'mallory' });
    expect(job).toMatchObject({ status: 'running', uploadedBy: 'mallory', deleted: 0 });
    await service.erasures.idle();

    expect(await service.erasures.get(tenant, admin, job.id)).toMatchObject({
      status: 'succeeded',
      deleted: 3,
      held: 1,
      heldReason: 'legal_hold',
    });
    for (const id of mine) expect(await exists(id)).toBe(false);
    expect(await exists(kept)).toBe(true);
    expect(await exists(other)).toBe(true);
  });

  /** An erasure row as a replica that crashed mid-job leaves it: running, its lease over. */
  const leftRunning = async (ownerId: string, leasedUntil: Date | null) => {
    const id = randomUUID();
    await db
      .insertInto('erasures')
      .values({
        tenant_id: tenant,
        id,
        requested_by: 'root',
        owner_id: ownerId,
        where_filter: null,
        status: 'running',
        started_at: now,
        updated_at: now,
        leased_until: leasedUntil,
      })
      .execute();
    return id;
  };

  it('takes up an erasure a crashed replica left running, and not one another replica holds', async () => {
    const victims = await Promise.all([1, 2].map(() => add(['default'], { ownerId: 'eve' })));
    const held = await leftRunning('nobody', new Date(now.getTime() + 30_000));
    const orphan = await leftRunning('eve', new Date(now.getTime() - 1_000));
    expect(await service.erasures.resume()).toBe(1);
    expect(await service.erasures.get(tenant, admin, orphan)).toMatchObject({
      status: 'succeeded',
      deleted: 2,
    });
    for (const id of victims) expect(await exists(id)).toBe(false);
    expect(await service.erasures.get(tenant, admin, held)).toMatchObject({ status: 'running' });
    await db.updateTable('erasures').set({ status: 'failed' }).where('id', '=', held).execute();
  });

  describe('running erasures as a lease queue', () => {
    leaseQueueConformance<ErasureRecord>(async () => {
      await db
        .updateTable('erasures')
        .set({ status: 'failed' })
        .where('status', '=', 'running')
        .execute();
      const repository = new ErasuresRepository(db);
      return {
        queue: { claim: (limit, leaseMs) => repository.claimRunning(now, limit, leaseMs) },
        add: async (count) =>
          Promise.all(Array.from({ length: count }, () => leftRunning('nobody', null))),
        idOf: (job) => job.id,
        finish: (job) =>
          repository.finish(tenant, job.id, { status: 'succeeded', held: 0, error: null, at: now }),
        elapse: async (ms) => Promise.resolve(void (now = new Date(now.getTime() + ms))),
      };
    });
  });
});
