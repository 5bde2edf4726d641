import { randomUUID } from 'node:crypto';

import { DEFAULT_CHUNKER, type PiiSummary, pipelineOf, toTenantId } from '@kb/contracts';
import { ErrorKind } from '@kb/errors';

import type { NewDocument } from '../../src/documents/document.model';
import type { TenantStatusChange } from '../../src/documents/status-changes';
import {
  createKnowledgeBaseSchema,
  updateKnowledgeBaseSchema,
} from '../../src/knowledge-bases/knowledge-base.model';
import { newAccess } from '../../src/testing/document-service.fixture';
import {
  type DocumentsConformanceHarness,
  insertWithEvent as insert,
  newDocument,
  tenant,
} from './documents-conformance.support';
import { documentReadsConformance } from './documents-reads.conformance';

/**
 * The behaviour `SqlDocumentsRepository` (test/documents.repository.int-spec.ts, real Postgres)
 * and `InMemoryDocumentsRepository` (src/testing, unit tier) share, driven through the services
 * that compose them with the outbox. A fake that drifts from Postgres fails here.
 */
export function documentsRepositoryConformance(harness: () => DocumentsConformanceHarness): void {
  let h: DocumentsConformanceHarness;
  const insertWithEvent = (doc: NewDocument) => insert(h, doc);
  beforeEach(() => {
    h = harness();
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
    const outbox = (await h.outbox()).filter(
      (m) => m.key === doc.id && m.topic === 'kb.document.v1',
    );
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
    const { knowledgeBases } = h.service;
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
      const row = (await h.outbox()).find((m) => m.key === id && m.topic === 'kb.document.v1')!;
      return (JSON.parse(row.payload) as { payload: Record<string, unknown> }).payload;
    };
    const defaults = { chunker: DEFAULT_CHUNKER, model: 'all-MiniLM-L6-v2' };
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
    expect((await h.outbox()).filter((m) => m.key === doc.id)).toHaveLength(2);
  });

  it('only moves a document forward and never out of a final status', async () => {
    const doc = newDocument();
    await insertWithEvent(doc);
    const apply = (
      status: 'parsing' | 'embedding' | 'indexing' | 'indexed' | 'failed',
      version = 1,
    ) =>
      h.service.documentsRepository.applyStatus(tenant, {
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
    const view = await h.service.documentsRepository.findById(tenant, doc.id, 'all');
    expect(view).toMatchObject({ status: 'indexed', chunkCount: 3 });
    expect(Object.keys(view!.stageTimes).sort()).toEqual(['embedding', 'indexed', 'pending']);
  });

  it('records PII findings on their version whatever its status (ADR 51)', async () => {
    const doc = newDocument();
    await insertWithEvent(doc);
    const repository = h.service.documentsRepository;
    const change = (version: number, status: 'parsing' | 'embedding', pii?: PiiSummary) =>
      repository.applyStatus(tenant, {
        documentId: doc.id,
        version,
        status,
        at: new Date(),
        ...(pii ? { pii } : {}),
      });
    expect((await repository.findById(tenant, doc.id, 'all'))?.piiFindings ?? null).toBeNull();
    await change(1, 'embedding');
    // The parser sends them on a second `parsing` event, below the row's status by then.
    expect(await change(1, 'parsing', { email: 2, card: 1 })).toBe(false);
    await change(2, 'parsing', { ssn: 1 }); // another version: not this one's
    expect(await repository.findById(tenant, doc.id, 'all')).toMatchObject({
      status: 'embedding',
      piiFindings: { email: 2, card: 1 },
    });
  });

  it('applies a batch of status events in one statement as one at a time would', async () => {
    const repository = h.service.documentsRepository;
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
    const repository = h.service.documentsRepository;
    expect((await repository.findBySha256(tenant, sha256, 'all'))?.id).toBe(doc.id);
    expect(await repository.findBySha256(toTenantId('t2'), sha256, 'all')).toBeUndefined();
    expect(await repository.isBlobReferenced(sha256, doc.blobKey)).toBe(true);

    const t2 = toTenantId('t2');
    expect(
      await h.service.transactions.run((trx) => repository.delete(trx, t2, doc.id)),
    ).toBeUndefined();
    await expect(
      h.service.documents.delete(t2, newAccess({ tenantId: t2, isAdmin: true }), doc.id),
    ).rejects.toMatchObject({ kind: ErrorKind.NotFound });
    await h.service.blobs.put(`blobs/sha256/${sha256}`, 'hello');
    expect(await h.service.documents.delete(tenant, newAccess({ isAdmin: true }), doc.id)).toEqual({
      documentId: doc.id,
      blobDeleted: true,
      indexRemoval: 'scheduled',
    });
    expect(await h.service.blobs.exists(`blobs/sha256/${sha256}`)).toBe(false);
    expect(await repository.findById(tenant, doc.id, 'all')).toBeUndefined();
    expect(await repository.isBlobReferenced(sha256, doc.blobKey)).toBe(false);
    const events = (await h.outbox()).filter(
      (m) => m.key === doc.id && m.topic === 'kb.document.v1',
    );
    expect(
      events.map((e) => (JSON.parse(e.payload) as { payload: { kind: string } }).payload.kind),
    ).toEqual(['uploaded', 'deleted']);
  });

  it('shows a document only to the principals it grants, and changes them with an event', async () => {
    const doc = newDocument();
    await insertWithEvent(doc);
    const repository = h.service.documentsRepository;
    expect(await repository.findById(tenant, doc.id, ['u:bob', 't:*'])).toBeUndefined();
    expect(await repository.findById(tenant, doc.id, ['u:alice'])).toBeDefined();
    expect(await repository.findById(tenant, doc.id, ['g:eng'])).toBeDefined();
    const updated = await h.service.documents.setAcl(tenant, newAccess(), doc.id, {
      users: ['bob'],
      groups: [],
      roles: [],
      tenant: false,
    });
    expect(updated?.acl.users).toEqual(['bob']);
    expect(await repository.findById(tenant, doc.id, ['u:bob'])).toBeDefined();
    expect(await repository.findById(tenant, doc.id, ['g:eng'])).toBeUndefined();
    const events = (await h.outbox()).filter((m) => m.key === doc.id);
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
        h.service.documents.register(newDocument({ id: randomUUID(), sha256 }), ['u:alice']),
      ),
    );
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
    expect(new Set(results.map((r) => r.document.id)).size).toBe(1);
    // Someone who cannot read it gets a document of their own.
    const other = await h.service.documents.register(
      newDocument({ id: randomUUID(), sha256, ownerId: 'zoe' }),
      ['u:zoe'],
    );
    expect(other.duplicate).toBe(false);
  });

  documentReadsConformance(() => h);
}
