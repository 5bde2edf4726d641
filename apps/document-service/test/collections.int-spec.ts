import { randomUUID } from 'node:crypto';

import { type Access } from '@kb/auth';
import {
  type DocumentFilterableFields,
  matchesDocumentFilter,
  parseDocumentFilter,
  toTenantId,
} from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import type { DocumentRecord, NewDocument } from '../src/documents/document.model';
import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import { sqlDocumentService } from './support/sql-document-service';

jest.setTimeout(120_000);

const tenant = toTenantId('t1');
const access = (userId: string, isAdmin = false): Access => ({
  tenantId: tenant,
  userId,
  principals: [`u:${userId}`],
  documentActions: new Set(['read', 'write', 'delete']),
  isAdmin,
});

/** Collections in Postgres: the listing filter's SQL, stats, emptying and cascade deletes. */
describe('collections in SQL', () => {
  const schema = `collections_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let pool: Pool;
  let db: Kysely<DocumentDatabase>;
  let service: ReturnType<typeof sqlDocumentService>;
  const alice = access('alice');
  const bob = access('bob');
  const now = new Date('2026-11-22T10:00:00Z');

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

  const add = async (
    owner: string,
    knowledgeBaseIds: string[],
    extra: Partial<NewDocument> = {},
  ): Promise<string> => {
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
      ownerId: owner,
      acl: { users: [], groups: [], roles: [], tenant: false },
      metadata: {},
      now,
      ...extra,
    };
    return (await service.documents.register(doc, [])).document.id;
  };
  const kb = (id: string) =>
    service.knowledgeBases.create(tenant, alice, {
      id,
      name: id,
      description: '',
      tagRule: { anyOf: [] },
    });

  it('filters a listing in SQL exactly as the reference evaluator does', async () => {
    await kb('filters');
    const ids = [
      await add('alice', ['filters'], {
        tags: ['finance'],
        metadata: { author: 'ann', year: 2024, langs: ['en', 'de'] },
      }),
      await add('alice', ['filters'], {
        tags: ['legal'],
        contentType: 'application/pdf',
        metadata: { author: 'bob', year: 2021 },
      }),
      await add('alice', ['filters'], { metadata: { year: '2024' } }),
    ];
    await service.documents.applyStatus(
      tenant,
      { documentId: ids[0]!, version: 1, status: 'indexed', chunkCount: 2 },
      new Date('2026-11-22T11:00:00Z'),
    );
    const filters = [
      { tags: 'finance' },
      { status: 'indexed' },
      { status: { $ne: 'indexed' } },
      { content_type: { $in: ['application/pdf'] } },
      { 'metadata.year': { $gte: 2022 } },
      { 'metadata.year': '2024' },
      { 'metadata.langs': 'de' },
      { 'metadata.author': { $exists: false } },
      { $or: [{ tags: 'legal' }, { 'metadata.author': 'ann' }] },
      { updated_at: { $gt: '2026-11-22T10:30:00Z' } },
      { created_at: { $lte: now.toISOString() }, tags: { $nin: ['legal'] } },
      // Ids are compared as uuids: a malformed or upper-case spelling matches nothing, no error.
      { document_id: ids[0]! },
      { document_id: { $in: [ids[0]!, ids[2]!, 'not-a-uuid', ids[1]!.toUpperCase()] } },
      { document_id: { $nin: [ids[1]!, 'not-a-uuid'] } },
      { document_id: { $in: ['not-a-uuid'] } },
    ];
    const rows = await service.documentsRepository.list(tenant, 100, 'all', undefined, 'filters');
    for (const where of filters) {
      const node = parseDocumentFilter(where);
      const got = await service.documents.list(tenant, alice, 100, undefined, 'filters', node);
      const expected = rows.filter((row) => matchesDocumentFilter(node, filterable(row)));
      expect({ where, ids: got.items.map((d) => d.id).sort() }).toEqual({
        where,
        ids: expected.map((d) => d.id).sort(),
      });
    }
    // Not vacuous: the cases select different documents.
    const sizes = await Promise.all(
      filters.map(async (where) => {
        const page = await service.documents.list(
          tenant,
          alice,
          100,
          undefined,
          'filters',
          parseDocumentFilter(where),
        );
        return page.items.length;
      }),
    );
    expect(new Set(sizes).size).toBeGreaterThan(1);
    // bob reads none of them: the filter never widens what he sees.
    const ofBob = await service.documents.list(tenant, bob, 100, undefined, 'filters');
    expect(ofBob.items).toEqual([]);
  });

  it('counts stats and metadata values over what the caller reads', async () => {
    await kb('stats');
    const indexed = await add('alice', ['stats'], { metadata: { team: 'red' } });
    await add('alice', ['stats'], { metadata: { team: ['red', 'blue'] } });
    await add('bob', ['stats'], { metadata: { team: 'secret' }, sizeBytes: 5 });
    await service.documents.applyStatus(
      tenant,
      { documentId: indexed, version: 1, status: 'indexed', chunkCount: 4 },
      new Date('2026-11-22T12:00:00Z'),
    );
    const ofAlice = await service.collections.stats(tenant, alice, 'stats');
    expect(ofAlice).toMatchObject({
      status: 'indexing',
      documentCount: 2,
      chunkCount: 4,
      bytes: 20,
      lastIndexedAt: '2026-11-22T12:00:00.000Z',
      scope: 'readable',
    });
    expect(ofAlice.documentsByStatus).toMatchObject({ indexed: 1, pending: 1 });
    const values = await service.collections.metadataValues(
      tenant,
      alice,
      'stats',
      { kind: 'metadata', key: 'team' },
      100,
    );
    expect(values.values).toEqual([
      { value: 'blue', count: 1 },
      { value: 'red', count: 2 },
    ]);
    const ofAdmin = await service.collections.metadataValues(
      tenant,
      access('root', true),
      'stats',
      { kind: 'metadata', key: 'team' },
      100,
    );
    expect(ofAdmin.values.map((v) => v.value)).toEqual(['blue', 'red', 'secret']);
    expect((await service.collections.stats(tenant, bob, 'stats')).documentCount).toBe(1);
  });

  it('deletes with cascade what only it holds, unlinks the rest, and hides what the caller cannot read', async () => {
    await kb('doomed');
    await kb('other');
    const only = await add('alice', ['doomed']);
    const shared = await add('alice', ['doomed', 'other']);
    const hidden = await add('bob', ['doomed']);
    // alice reads two documents in it: without cascade, 409.
    await expect(service.collections.delete(tenant, alice, 'doomed', false)).rejects.toMatchObject({
      code: 'knowledge_base_not_empty',
    });
    // bob reads only his own document: his refusal says 1, never 3.
    await expect(service.collections.delete(tenant, bob, 'doomed', false)).rejects.toThrow(
      /still has 1 document/,
    );
    const result = await service.collections.delete(tenant, alice, 'doomed', true);
    expect(result).toEqual({
      id: 'doomed',
      cascade: true,
      deletedCount: 1,
      unlinkedCount: 1,
      indexRemoval: 'scheduled',
    });
    expect(await service.documentsRepository.findById(tenant, only, 'all')).toBeUndefined();
    expect(
      (await service.documentsRepository.findById(tenant, shared, 'all'))?.knowledgeBaseIds,
    ).toEqual(['other']);
    // bob's document, which alice cannot read, is not deleted: it moves to `default`.
    expect(
      (await service.documentsRepository.findById(tenant, hidden, 'all'))?.knowledgeBaseIds,
    ).toEqual(['default']);
    const events = await sql<{ payload: string }>`
      SELECT payload FROM outbox WHERE topic = 'kb.collection.v1' ORDER BY id`.execute(db);
    expect(JSON.parse(events.rows.at(-1)!.payload).payload).toEqual({
      kind: 'knowledge_base_deleted',
      knowledgeBaseId: 'doomed',
      cascade: true,
      deletedCount: 1,
      unlinkedCount: 2,
    });
    // The deleted document reaches the indexes as one bulk removal, not a `deleted` event.
    const removals = await sql<{ payload: string }>`
      SELECT payload FROM outbox WHERE topic = 'kb.document.v1'
        AND payload::jsonb -> 'payload' ->> 'knowledgeBaseId' = 'doomed'`.execute(db);
    expect(removals.rows.map((row) => JSON.parse(row.payload).payload)).toEqual([
      expect.objectContaining({
        kind: 'documents_removed',
        documentIds: [only],
        cause: 'knowledge_base_deleted',
        batch: 0,
        batches: 1,
      }),
    ]);
  });

  it('empties 50,000 documents in one job, with 50 documents_removed events of 1,000 ids', async () => {
    await kb('big');
    await kb('keep');
    const kept = await add('alice', ['big', 'keep']);
    // Seeded in SQL: 50,000 uploads through the API would take far longer than the empty.
    await sql`
      INSERT INTO documents (id, tenant_id, title, filename, content_type, size_bytes, sha256,
        blob_key, version, status, metadata, tags, knowledge_base_ids,
        explicit_knowledge_base_ids, owner_id, acl, principals, stage_times, created_at, updated_at)
      SELECT gen_random_uuid(), ${tenant}, 'seed ' || n, 'seed.txt', 'text/plain', 10,
        md5(n::text) || md5(n::text), 'blobs/t1/sha256/seed', 1, 'indexed', '{}'::jsonb,
        '{}'::text[], ARRAY['big'], ARRAY['big'], 'alice',
        '{"users":[],"groups":[],"roles":[],"tenant":false}'::jsonb, ARRAY['u:alice'],
        '{}'::jsonb, now(), now()
      FROM generate_series(1, 50000) AS n`.execute(db);
    const before = await sql<{ maxId: string }>`
      SELECT coalesce(max(id), 0) AS "maxId" FROM outbox`.execute(db);
    const generation = await service.generations.current(tenant);
    const started = Date.now();
    const result = await service.collections.empty(tenant, alice, 'big');
    // Cached search results from before are retired before the answer (ADR 24).
    expect(await service.generations.current(tenant)).toBe(generation + 1);
    const tookMs = Date.now() - started;
    expect(result).toMatchObject({ deletedCount: 50_001, unlinkedCount: 1, retainedCount: 0 });
    expect(tookMs).toBeLessThan(30_000);
    const left = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM documents WHERE knowledge_base_ids @> ARRAY['big']`.execute(
      db,
    );
    expect(left.rows[0]!.n).toBe(0);
    expect(
      (await service.documentsRepository.findById(tenant, kept, 'all'))?.knowledgeBaseIds,
    ).toEqual(['keep']);
    const removed = await sql<{ key: string; payload: string }>`
      SELECT message_key AS key, payload FROM outbox
      WHERE topic = 'kb.document.v1' AND id > ${before.rows[0]!.maxId}
      ORDER BY id`.execute(db);
    const batches = removed.rows.map((row) => ({
      key: row.key,
      ...(JSON.parse(row.payload) as { payload: Record<string, unknown> }).payload,
    })) as Array<{ key: string; kind: string; documentIds: string[]; jobId: string }>;
    // No per-document `deleted` event any more; the one `attributes_changed` is the unlinked one.
    expect(batches.filter((b) => b.kind === 'deleted')).toEqual([]);
    const bulk = batches.filter((b) => b.kind === 'documents_removed');
    expect(bulk).toHaveLength(50);
    expect(bulk.every((b) => b.documentIds.length === 1000 && b.key === b.documentIds[0])).toBe(
      true,
    );
    expect(new Set(bulk.flatMap((b) => b.documentIds)).size).toBe(50_000);
    expect(bulk.every((b) => b.jobId === result.jobId)).toBe(true);
    expect(bulk[49]).toMatchObject({
      knowledgeBaseId: 'big',
      cause: 'emptied',
      batch: 49,
      batches: 50,
    });
    // Every message stays far below Kafka's 1 MB default.
    expect(Math.max(...removed.rows.map((row) => row.payload.length))).toBeLessThan(100_000);
    // The knowledge base and its configuration stay.
    expect(await service.knowledgeBases.get(tenant, 'big')).toMatchObject({ id: 'big' });
    process.stdout.write(`empty of 50,001 documents took ${tookMs} ms\n`);
  });
});

const filterable = (row: DocumentRecord): DocumentFilterableFields => ({
  documentId: row.id,
  tags: row.tags,
  uploadedAt: row.createdAt.getTime(),
  metadata: row.metadata,
  status: row.status,
  contentType: row.contentType,
  createdAt: row.createdAt.getTime(),
  updatedAt: row.updatedAt.getTime(),
});
