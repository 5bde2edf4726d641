import { randomUUID } from 'node:crypto';

import { auditEventSchema, toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest, pendingMigrations } from '@kb/database';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Pool } from 'pg';

import type { NewDocument } from '../src/documents/document.model';
import type { Visibility } from '../src/documents/documents.repository';
import { migrations } from '../src/migrations';
import type { DocumentDatabase } from '../src/platform/db.types';
import { newAccess } from '../src/testing/document-service.fixture';
import { documentsRepositoryConformance } from './support/documents-repository.conformance';
import { sqlDocumentService } from './support/sql-document-service';

jest.setTimeout(30_000);

/** A caller who can read nothing never gets a duplicate: every insert is a new document. */
const NOBODY: Visibility = [];

/**
 * Real Postgres; this file migrates its own throw-away schema so it can run beside others. The
 * SQL repositories, driven through the services that compose them with the outbox: the shared
 * conformance suite (the in-memory fake runs it too), then what only SQL shows.
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

  documentsRepositoryConformance(() => ({
    service,
    outbox: async () =>
      (
        await db
          .selectFrom('outbox')
          .select(['topic', 'message_key', 'payload'])
          .orderBy('id')
          .execute()
      ).map((row) => ({ topic: row.topic, key: row.message_key, payload: row.payload })),
  }));

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
