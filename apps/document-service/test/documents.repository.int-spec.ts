import { randomUUID } from 'node:crypto';

import { auditEventSchema, DEFAULT_CHUNKER, pipelineOf, toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest, pendingMigrations } from '@kb/database';
import { ErrorKind } from '@kb/errors';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Pool } from 'pg';

import type { NewDocument } from '../src/documents/document.model';
import type { Visibility } from '../src/documents/documents.repository';
import type { TenantStatusChange } from '../src/documents/status-changes';
import {
  createKnowledgeBaseSchema,
  updateKnowledgeBaseSchema,
} from '../src/knowledge-bases/knowledge-base.model';
import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import { newAccess } from '../src/testing/document-service.fixture';
import { sqlDocumentService } from './support/sql-document-service';

jest.setTimeout(30_000);

/** A caller who can read nothing never gets a duplicate: every insert is a new document. */
const NOBODY: Visibility = [];

/**
 * Real Postgres; this file migrates its own throw-away schema so it can run beside others. The
 * SQL repositories, driven through the services that compose them with the outbox.
 */
describe('DocumentsRepository', () => {
  const schema = `document_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let pool: Pool;
  let db: Kysely<DocumentDatabase>;
  let service: ReturnType<typeof sqlDocumentService>;
  const tenant = toTenantId('t1');
  const insertWithEvent = (doc: NewDocument) => service.documents.register(doc, NOBODY);

  beforeAll(async () => {
    pool = createPool({ url: process.env['DATABASE_URL']!, schema, maxConnections: 2 });
    db = createDatabase<DocumentDatabase>(pool);
    expect(await migrateToLatest(db, schema, migrations)).toEqual({
      applied: Object.keys(migrations),
    });
    expect(await pendingMigrations(db, schema, migrations)).toEqual([]);
    service = sqlDocumentService(db, () => new Date('2026-11-22T10:00:00Z'));
  });

  afterAll(async () => {
    await sql`DROP SCHEMA ${sql.raw(schema)} CASCADE`.execute(db);
    await pool.end();
  });

  const newDocument = (overrides: Partial<NewDocument> = {}): NewDocument => ({
    id: randomUUID(),
    tenantId: tenant,
    title: 'Title',
    filename: 'a.md',
    contentType: 'text/markdown',
    sizeBytes: 5,
    sha256: 'a'.repeat(64),
    blobKey: `blobs/sha256/${'a'.repeat(64)}`,
    tags: [],
    knowledgeBaseIds: ['default'],
    ownerId: 'alice',
    acl: { users: [], groups: ['eng'], roles: [], tenant: false },
    metadata: { team: 'x' },
    now: new Date('2026-11-22T10:00:00Z'),
    ...overrides,
  });

  it('writes the row and its uploaded event in one transaction', async () => {
    const doc = newDocument();
    const { document: view } = await insertWithEvent(doc);
    expect(view).toMatchObject({
      id: doc.id,
      status: 'pending',
      version: 1,
      metadata: { team: 'x' },
    });
    const outbox = await db
      .selectFrom('outbox')
      .selectAll()
      .where('message_key', '=', doc.id)
      .where('topic', '=', 'kb.document.v1')
      .execute();
    expect(outbox).toHaveLength(1);
    expect(outbox[0]!.topic).toBe('kb.document.v1');
    expect(JSON.parse(outbox[0]!.payload)).toMatchObject({
      tenantId: 't1',
      payload: {
        kind: 'uploaded',
        documentId: doc.id,
        version: 1,
        blob: { bucket: 'kb-documents' },
      },
    });
  });

  it("carries its knowledge bases' distinct pipelines in the uploaded event", async () => {
    const { knowledgeBases } = service;
    const access = newAccess({ documentActions: new Set(['read', 'write']) });
    const chunker = { strategy: 'markdown', size: 800, overlap: 100, headingLevel: 2 } as const;
    const created = await knowledgeBases.create(
      tenant,
      access,
      createKnowledgeBaseSchema.parse({ id: 'handbooks', name: 'Handbooks', chunker }),
    );
    expect(created).toMatchObject({
      chunker,
      embeddingModel: 'all-MiniLM-L6-v2',
      embeddingDimension: 384,
      allowPrecomputedVectors: false,
    });
    // Pre-computed vectors: on by a tenant admin only, kept by other edits, off again (ADR 33).
    const admin = newAccess({ userId: 'root', isAdmin: true });
    const allow = (who: typeof access, allowPrecomputedVectors: boolean) =>
      knowledgeBases.update(
        tenant,
        who,
        'handbooks',
        updateKnowledgeBaseSchema.parse({ allowPrecomputedVectors }),
      );
    await expect(allow(access, true)).rejects.toMatchObject({ code: 'permission_denied' });
    expect(await allow(admin, true)).toMatchObject({ allowPrecomputedVectors: true });
    await knowledgeBases.update(tenant, access, 'handbooks', { description: 'kept' });
    expect(await knowledgeBases.get(tenant, 'handbooks')).toMatchObject({
      description: 'kept',
      allowPrecomputedVectors: true,
    });
    expect(await allow(access, false)).toMatchObject({ allowPrecomputedVectors: false });
    // Immutable: the same config back is no change, another one is 409.
    await knowledgeBases.update(
      tenant,
      access,
      'handbooks',
      updateKnowledgeBaseSchema.parse({ chunker }),
    );
    await expect(
      knowledgeBases.update(
        tenant,
        access,
        'handbooks',
        updateKnowledgeBaseSchema.parse({ chunker: { strategy: 'token', size: 256, overlap: 32 } }),
      ),
    ).rejects.toMatchObject({ kind: ErrorKind.FailedPrecondition, code: 'immutable_field' });
    // A second knowledge base with the same pipeline adds no pipeline.
    await knowledgeBases.create(
      tenant,
      access,
      createKnowledgeBaseSchema.parse({ id: 'manuals', name: 'Manuals', chunker }),
    );

    const withChunker = newDocument({ knowledgeBaseIds: ['handbooks', 'manuals', 'default'] });
    const plain = newDocument();
    await insertWithEvent(withChunker);
    await insertWithEvent(plain);
    const payloadOf = async (id: string) => {
      const row = await db
        .selectFrom('outbox')
        .select('payload')
        .where('message_key', '=', id)
        .where('topic', '=', 'kb.document.v1')
        .executeTakeFirstOrThrow();
      return (JSON.parse(row.payload) as { payload: Record<string, unknown> }).payload;
    };
    const defaults = { chunker: DEFAULT_CHUNKER, model: 'all-MiniLM-L6-v2' };
    expect(service.defaults).toEqual(defaults); // the provider, built from config
    const handbooks = pipelineOf(tenant, chunker, 'all-MiniLM-L6-v2', defaults);
    const standard = pipelineOf(tenant, DEFAULT_CHUNKER, 'all-MiniLM-L6-v2', defaults);
    expect((await payloadOf(withChunker.id))['pipelines']).toEqual([
      { ...handbooks, knowledgeBaseIds: ['handbooks', 'manuals'] },
      { ...standard, knowledgeBaseIds: ['default'] },
    ]);
    expect(handbooks.space).toBe(`${tenant}~${handbooks.key}`);
    // The default pipeline keeps the tenant's own space, where chunks lived before pipelines.
    expect(standard.space).toBe(tenant);
    expect((await payloadOf(plain.id))['pipelines']).toEqual([
      { ...standard, knowledgeBaseIds: ['default'] },
    ]);
  });

  it('leaves nothing behind when the transaction fails', async () => {
    const doc = newDocument();
    await insertWithEvent(doc);
    await expect(insertWithEvent(doc)).rejects.toThrow(); // duplicate id
    // The first insert's event and audit record; nothing of the failed one.
    expect(
      await db.selectFrom('outbox').selectAll().where('message_key', '=', doc.id).execute(),
    ).toHaveLength(2);
  });

  it('only moves a document forward and never out of a final status', async () => {
    const doc = newDocument();
    await insertWithEvent(doc);
    const apply = (
      status: 'parsing' | 'embedding' | 'indexing' | 'indexed' | 'failed',
      version = 1,
    ) =>
      service.documentsRepository.applyStatus(tenant, {
        documentId: doc.id,
        version,
        status,
        at: new Date(),
        chunkCount: status === 'indexed' ? 3 : undefined,
      });
    expect(await apply('embedding')).toBe(true);
    expect(await apply('parsing')).toBe(false); // late event
    expect(await apply('embedding')).toBe(false); // replay
    expect(await apply('indexed', 2)).toBe(false); // another version
    expect(await apply('indexed')).toBe(true);
    expect(await apply('failed')).toBe(false); // final
    const view = await service.documentsRepository.findById(tenant, doc.id, 'all');
    expect(view).toMatchObject({ status: 'indexed', chunkCount: 3 });
    expect(Object.keys(view!.stageTimes).sort()).toEqual(['embedding', 'indexed', 'pending']);
  });

  it('applies a batch of status events in one statement as one at a time would', async () => {
    const repository = service.documentsRepository;
    const pair = async () => {
      const [a, b] = [newDocument(), newDocument()];
      await insertWithEvent(a);
      await insertWithEvent(b);
      await repository.applyStatus(tenant, {
        documentId: a.id,
        version: 1,
        status: 'embedding',
        at: new Date(1_000),
      });
      return [a.id, b.id] as const;
    };
    const events = (a: string, b: string): TenantStatusChange[] => [
      { tenantId: tenant, documentId: a, version: 1, status: 'parsing', at: new Date(2_000) }, // below the row
      { tenantId: tenant, documentId: a, version: 1, status: 'indexing', at: new Date(3_000) },
      { tenantId: tenant, documentId: b, version: 1, status: 'parsing', at: new Date(4_000) },
      { tenantId: tenant, documentId: b, version: 2, status: 'indexed', at: new Date(5_000) }, // another version
      { tenantId: tenant, documentId: b, version: 1, status: 'embedding', at: new Date(6_000) },
      {
        tenantId: tenant,
        documentId: a,
        version: 1,
        status: 'indexed',
        chunkCount: 3,
        at: new Date(7_000),
      },
      {
        tenantId: toTenantId('t2'),
        documentId: a,
        version: 1,
        status: 'failed',
        at: new Date(8_000),
      }, // another tenant
      { tenantId: tenant, documentId: a, version: 1, status: 'failed', at: new Date(9_000) }, // after final
    ];
    const [a1, b1] = await pair();
    const moved = await repository.applyStatuses(events(a1, b1));
    expect(moved.sort((x, y) => x.status.localeCompare(y.status))).toEqual([
      { tenantId: tenant, documentId: b1, version: 1, status: 'embedding' },
      { tenantId: tenant, documentId: a1, version: 1, status: 'indexed' },
    ]);
    const [a2, b2] = await pair();
    for (const event of events(a2, b2)) await repository.applyStatus(event.tenantId, event);
    const outcome = async (id: string) => {
      const view = await repository.findById(tenant, id, 'all');
      return {
        status: view!.status,
        chunkCount: view!.chunkCount,
        stageTimes: view!.stageTimes,
        updatedAt: view!.updatedAt,
      };
    };
    expect(await outcome(a1)).toEqual(await outcome(a2));
    expect(await outcome(b1)).toEqual(await outcome(b2));
    expect(await outcome(a1)).toMatchObject({
      status: 'indexed',
      chunkCount: 3,
      stageTimes: {
        embedding: new Date(1_000).toISOString(),
        indexing: new Date(3_000).toISOString(),
        indexed: new Date(7_000).toISOString(),
      },
    });
    expect((await outcome(a1)).stageTimes).not.toHaveProperty('parsing');
    expect(await outcome(b1)).toMatchObject({ status: 'embedding' });
    expect(await repository.applyStatuses([])).toEqual([]);
  });

  it('finds a tenant’s document by content and deletes it with its event', async () => {
    const sha256 = 'b'.repeat(64);
    const doc = newDocument({ sha256, blobKey: `blobs/sha256/${sha256}` });
    await insertWithEvent(doc);
    const repository = service.documentsRepository;
    expect((await repository.findBySha256(tenant, sha256, 'all'))?.id).toBe(doc.id);
    expect(await repository.findBySha256(toTenantId('t2'), sha256, 'all')).toBeUndefined();
    expect(await repository.isBlobReferenced(sha256, doc.blobKey)).toBe(true);

    const t2 = toTenantId('t2');
    expect(
      await service.transactions.run((trx) => repository.delete(trx, t2, doc.id)),
    ).toBeUndefined();
    await expect(
      service.documents.delete(t2, newAccess({ tenantId: t2, isAdmin: true }), doc.id),
    ).rejects.toMatchObject({ kind: ErrorKind.NotFound });
    await service.blobs.put(`blobs/sha256/${sha256}`, 'hello');
    expect(await service.documents.delete(tenant, newAccess({ isAdmin: true }), doc.id)).toEqual({
      documentId: doc.id,
      blobDeleted: true,
      indexRemoval: 'scheduled',
    });
    expect(await service.blobs.exists(`blobs/sha256/${sha256}`)).toBe(false);
    expect(await repository.findById(tenant, doc.id, 'all')).toBeUndefined();
    expect(await repository.isBlobReferenced(sha256, doc.blobKey)).toBe(false);
    const events = await db
      .selectFrom('outbox')
      .selectAll()
      .where('message_key', '=', doc.id)
      .where('topic', '=', 'kb.document.v1')
      .orderBy('id')
      .execute();
    expect(
      events.map((e) => (JSON.parse(e.payload) as { payload: { kind: string } }).payload.kind),
    ).toEqual(['uploaded', 'deleted']);
  });

  it('shows a document only to the principals it grants, and changes them with an event', async () => {
    const doc = newDocument();
    await insertWithEvent(doc);
    const repository = service.documentsRepository;
    expect(await repository.findById(tenant, doc.id, ['u:bob', 't:*'])).toBeUndefined();
    expect(await repository.findById(tenant, doc.id, ['u:alice'])).toBeDefined();
    expect(await repository.findById(tenant, doc.id, ['g:eng'])).toBeDefined();
    const updated = await service.documents.setAcl(tenant, newAccess(), doc.id, {
      users: ['bob'],
      groups: [],
      roles: [],
      tenant: false,
    });
    expect(updated?.acl.users).toEqual(['bob']);
    expect(await repository.findById(tenant, doc.id, ['u:bob'])).toBeDefined();
    expect(await repository.findById(tenant, doc.id, ['g:eng'])).toBeUndefined();
    const events = await db
      .selectFrom('outbox')
      .selectAll()
      .where('message_key', '=', doc.id)
      .orderBy('id')
      .execute();
    expect(
      events.map((e) => [
        e.topic,
        JSON.parse(e.payload).payload.kind ?? JSON.parse(e.payload).payload.action,
      ]),
    ).toEqual([
      ['kb.document.v1', 'uploaded'],
      ['kb.audit.v1', 'document_uploaded'],
      ['kb.document.v1', 'acl_changed'],
      ['kb.audit.v1', 'document_acl_changed'],
    ]);
    expect(JSON.parse(events[2]!.payload).payload.principals).toEqual(['u:alice', 'u:bob']);
  });

  it('makes one document of concurrent uploads of the same content', async () => {
    const sha256 = randomUUID().replace(/-/g, '').padEnd(64, 'c');
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        service.documents.register(newDocument({ id: randomUUID(), sha256 }), ['u:alice']),
      ),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(results.map((r) => r.document.id)).size).toBe(1);
    // Someone who cannot read it gets a document of their own.
    const other = await service.documents.register(
      newDocument({ id: randomUUID(), sha256, ownerId: 'zoe' }),
      ['u:zoe'],
    );
    expect(other.duplicate).toBe(false);
  });

  it('scopes reads to the tenant', async () => {
    const doc = newDocument();
    await insertWithEvent(doc);
    const repository = service.documentsRepository;
    expect(await repository.findById(toTenantId('t2'), doc.id, 'all')).toBeUndefined();
    expect(await repository.findById(tenant, doc.id, 'all')).toBeDefined();
  });

  it('pages through a tenant’s documents newest first', async () => {
    const other = toTenantId(`page-${randomUUID().slice(0, 8)}`);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const doc = newDocument({ tenantId: other, now: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) });
      ids.push(doc.id);
      await insertWithEvent(doc);
    }
    const repository = service.documentsRepository;
    const first = await repository.list(other, 3, 'all');
    const last = first[first.length - 1]!;
    const second = await repository.list(other, 3, 'all', {
      createdAt: last.createdAt.toISOString(),
      id: last.id,
    });
    expect([...first, ...second].map((d) => d.id)).toEqual([...ids].reverse());
  });
  it('pages an external-id prefix in byte order, escaping LIKE, only what the caller reads (N6)', async () => {
    const other = toTenantId(`prefix-${randomUUID().slice(0, 8)}`);
    // Byte order, whatever the database's collation: 'B' < 'a' < 'b' < 'é'.
    const names = ['b', 'a', 'é', 'B', 'a_b', 'a%'];
    for (const name of names) {
      await insertWithEvent(newDocument({ tenantId: other, externalId: `src/${name}` }));
    }
    // Not under the prefix: another prefix, and a `_` that LIKE would take as any character.
    await insertWithEvent(newDocument({ tenantId: other, externalId: 'srcX/a' }));
    await insertWithEvent(
      newDocument({
        tenantId: other,
        externalId: 'src/hidden',
        acl: { users: [], groups: [], roles: [], tenant: false },
        ownerId: 'zoe',
      }),
    );
    const repository = service.documentsRepository;
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await repository.pageByExternalIdPrefix(other, 'src/', ['g:eng'], 2, after);
      seen.push(...page.map((d) => d.externalId!));
      if (page.length < 2) break;
      after = page[page.length - 1]!.externalId!;
    }
    const expected = names
      .map((n) => `src/${n}`)
      .sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(seen).toEqual(expected);
    expect(await repository.pageByExternalIdPrefix(other, 'src/a_', 'all', 10)).toHaveLength(1);
    // The sync's own method still lists them all at once.
    expect(await repository.listByExternalIdPrefix(other, 'src/', 'all')).toHaveLength(7);
    // Through the service: the cursor round-trips, and a page of many is audited with its ids.
    const alice = newAccess({ tenantId: other, userId: 'alice', principals: ['g:eng'] });
    const first = await service.reads.listByExternalIdPrefix(other, alice, 'src/', 4);
    const second = await service.reads.listByExternalIdPrefix(
      other,
      alice,
      'src/',
      4,
      first.nextCursor!,
    );
    expect([...first.items, ...second.items].map((d) => d.externalId)).toEqual(expected);
    expect(second.nextCursor).toBeNull();
    const { rows } = await sql<{ payload: string }>`
      SELECT payload FROM outbox WHERE topic = 'kb.audit.v1' AND payload::jsonb->>'tenantId' = ${other}
         AND payload::jsonb->'payload'->>'action' = 'documents_listed' ORDER BY id`.execute(db);
    expect(rows.map((r) => JSON.parse(r.payload).payload.documentIds)).toEqual([
      first.items.map((d) => d.id),
      second.items.map((d) => d.id),
    ]);
  });

  it('reads a listing and writes its audit record in one statement', async () => {
    const other = toTenantId(`read-${randomUUID().slice(0, 8)}`);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const doc = newDocument({ tenantId: other, now: new Date(Date.UTC(2026, 0, 2, 0, 0, i)) });
      ids.push(doc.id);
      await insertWithEvent(doc);
    }
    const alice = newAccess({ tenantId: other, userId: 'alice', isAdmin: true });
    const records = async () =>
      (
        await sql<{ message_key: string; payload: string; headers: unknown }>`
          SELECT message_key, payload, headers FROM outbox
           WHERE topic = 'kb.audit.v1' AND payload::jsonb->>'tenantId' = ${other}
             AND payload::jsonb->'payload'->>'action' = 'documents_listed' ORDER BY id`.execute(db)
      ).rows;
    // The statements the listing sends, counted by a Kysely of its own over the same pool.
    const statements: string[] = [];
    const counted = sqlDocumentService(
      new Kysely<DocumentDatabase>({
        dialect: new PostgresDialect({ pool }),
        log: (event) => void (event.level === 'query' && statements.push(event.query.sql)),
      }),
      () => new Date('2026-11-22T10:00:00Z'),
    );
    const page = await counted.reads.list(other, alice, 2);
    expect(page.items.map((d) => d.id)).toEqual([ids[2], ids[1]]);
    expect(page.nextCursor).not.toBeNull();
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^with "page" as/);
    const [listed] = await records();
    expect(listed!.message_key).toBe('alice');
    const envelope = JSON.parse(listed!.payload);
    expect(auditEventSchema.parse(envelope.payload)).toMatchObject({
      action: 'documents_listed',
      actor: 'alice',
      documentIds: [ids[2], ids[1]],
      detail: '{"limit":2}',
    });
    expect(envelope).toMatchObject({ tenantId: other, type: expect.any(String) });
    // One served: keyed by the document, as its own events are; none served: still recorded.
    await service.reads.list(other, alice, 1);
    await service.reads.list(other, alice, 5, undefined, 'no-such-knowledge-base');
    const [, one, none] = await records();
    expect(one!.message_key).toBe(ids[2]);
    expect(JSON.parse(one!.payload).payload.documentIds).toEqual([ids[2]]);
    expect(none!.message_key).toBe('alice');
    expect(JSON.parse(none!.payload).payload.documentIds).toEqual([]);
    expect(counted.relay.soonWakes).toBe(1); // published with the window's other reads
  });
});
