import { Readable } from 'node:stream';

import { auditEventSchema, type ExtractedText, extractedTextKey, Topics } from '@kb/contracts';
import { ErrorKind } from '@kb/errors';
import { putJson } from '@kb/storage';

import { DocumentContentService } from '../document-content/document-content.service';
import { DocumentStatsService } from '../stats/document-stats.service';
import {
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../testing/document-service.fixture';
import { InMemoryDocumentStatsRepository } from '../testing/in-memory-document-stats.repository';

const files = spool();
afterAll(() => files.cleanup());

/** Review L5: uploads, edits, deletes and reads leave an audit record on `kb.audit.v1`. */
describe('document audit', () => {
  let f: DocumentServiceFixture;
  const alice = newAccess();
  const audit = () => f.outbox.envelopes(Topics.audit).map((e) => e.payload);
  /** The transaction each audit record was written in, and the tables it wrote. */
  const tablesOfTransactionOf = (action: string) => {
    const trx = f.db.outbox.find((message) => message.payload.includes(`"${action}"`))?.trx;
    return f.db.writes.filter((write) => write.trx === trx).map((write) => write.table);
  };

  beforeEach(() => {
    f = documentServiceFixture();
  });

  const upload = (content = 'hello') => f.documents.upload(TENANT, alice, files.file(content), {});

  it('records an upload, a content replacement, an edit and a delete with the change', async () => {
    const document = await upload();
    await f.documents.replaceContent(TENANT, alice, document.id, files.file('hello again'));
    await f.documents.edit(TENANT, alice, document.id, { tags: ['final'] });
    await f.documents.delete(TENANT, alice, document.id);

    expect(audit()).toEqual([
      expect.objectContaining({ action: 'document_uploaded', detail: '{"version":1}' }),
      expect.objectContaining({ action: 'document_content_replaced', detail: '{"version":2}' }),
      expect.objectContaining({ action: 'document_edited', detail: '{"tags":["final"]}' }),
      expect.objectContaining({ action: 'document_deleted', detail: '{}' }),
    ]);
    for (const record of audit()) {
      expect(record).toMatchObject({ actor: 'alice', documentIds: [document.id], chunks: [] });
      expect(auditEventSchema.parse(record)).toEqual(record);
    }
    // In the transaction of the change itself: no change without its record.
    expect(tablesOfTransactionOf('document_deleted')).toEqual(
      expect.arrayContaining(['documents', 'outbox']),
    );
  });

  it('records a duplicate upload as nothing new, and a refused write not at all', async () => {
    const document = await upload('same');
    expect((await upload('same')).duplicate).toBe(true);
    const bob = newAccess({ userId: 'bob' });
    await expect(f.documents.delete(TENANT, bob, document.id)).rejects.toMatchObject({
      kind: ErrorKind.NotFound,
    });
    expect(audit().map((record) => record.action)).toEqual(['document_uploaded']);
  });

  it('records the reads a caller was served, with the documents they got', async () => {
    const first = await upload('one');
    const second = await upload('two');
    const wakes = f.relay.wakes;
    await f.reads.get(TENANT, alice, first.id);
    await f.reads.list(TENANT, alice, 10);
    await expect(f.reads.get(TENANT, newAccess({ userId: 'bob' }), first.id)).rejects.toMatchObject(
      { kind: ErrorKind.NotFound },
    );

    expect(audit().slice(2)).toEqual([
      expect.objectContaining({ action: 'document_read', actor: 'alice', documentIds: [first.id] }),
      expect.objectContaining({
        action: 'documents_listed',
        actor: 'alice',
        documentIds: expect.arrayContaining([first.id, second.id]),
        detail: '{"limit":10}',
      }),
    ]);
    // Reads wake the relay soon, for one drain per window: at once, they cost a drain each.
    expect(f.relay.wakes).toBe(wakes);
    expect(f.relay.soonWakes).toBe(2);
  });

  it('records reads of the original and of the text, but not a refused or empty one (L5)', async () => {
    const document = await upload('hello world');
    const extracted: ExtractedText = {
      documentId: document.id,
      version: 1,
      format: 'text',
      text: 'hello world',
      pages: [],
      headings: [],
    };
    await putJson(f.blobs, extractedTextKey(TENANT, document.id, 1), extracted);
    const content = new DocumentContentService(f.documentsRepository, f.blobs, f.audit);
    const whole = await content.original(TENANT, alice, document.id);
    (whole.body as Readable).destroy();
    const ranged = await content.original(TENANT, alice, document.id, { range: 'bytes=0-4' });
    (ranged.body as Readable).destroy();
    expect(
      (await content.original(TENANT, alice, document.id, { range: 'bytes=99-' })).status,
    ).toBe(416);
    await content.text(TENANT, alice, document.id, { offset: 6, limit: 100 });
    const bob = newAccess({ userId: 'bob' });
    await expect(content.text(TENANT, bob, document.id, { offset: 0, limit: 1 })).rejects.toThrow();
    await expect(content.original(TENANT, bob, document.id)).rejects.toThrow();

    expect(audit().slice(1)).toEqual([
      expect.objectContaining({
        action: 'document_read',
        actor: 'alice',
        documentIds: [document.id],
        detail: '{"version":1,"part":"content"}',
      }),
      expect.objectContaining({
        action: 'document_read',
        documentIds: [document.id],
        detail: '{"version":1,"part":"content","range":"0-4"}',
      }),
      expect.objectContaining({
        action: 'document_read',
        documentIds: [document.id],
        detail: '{"version":1,"part":"text","offset":6,"length":5}',
      }),
    ]);
    for (const record of audit()) expect(auditEventSchema.parse(record)).toEqual(record);
  });

  it('records a page of an external-id prefix listing, stats and metadata values (L5)', async () => {
    const a = await f.documents.upload(TENANT, alice, files.file('a'), { externalId: 'x/a' });
    const b = await f.documents.upload(TENANT, alice, files.file('b'), { externalId: 'x/b' });
    const page = await f.reads.listByExternalIdPrefix(TENANT, alice, 'x/', 1);
    expect(page.items.map((d) => d.id)).toEqual([a.id]);
    await f.reads.listByExternalIdPrefix(TENANT, alice, 'x/', 1, page.nextCursor!);
    const stats = new DocumentStatsService(
      new InMemoryDocumentStatsRepository(f.db),
      f.knowledgeBasesRepository,
      f.audit,
    );
    await stats.stats(TENANT, alice);
    await f.collections.stats(TENANT, alice, 'default');
    await f.collections.metadataValues(TENANT, alice, 'default', { kind: 'tags' }, 5);

    expect(audit().slice(2)).toEqual([
      expect.objectContaining({
        action: 'documents_listed',
        documentIds: [a.id],
        detail: '{"externalIdPrefix":"x/","limit":1}',
      }),
      expect.objectContaining({
        action: 'documents_listed',
        documentIds: [b.id],
        detail: JSON.stringify({ externalIdPrefix: 'x/', limit: 1, cursor: page.nextCursor }),
      }),
      expect.objectContaining({ action: 'documents_listed', detail: '{"read":"stats"}' }),
      expect.objectContaining({
        action: 'documents_listed',
        detail: '{"read":"knowledge_base_stats","knowledgeBaseId":"default"}',
      }),
      expect.objectContaining({
        action: 'documents_listed',
        detail: '{"read":"metadata_values","knowledgeBaseId":"default","field":"tags","limit":5}',
      }),
    ]);
    for (const record of audit()) {
      expect(record).toMatchObject({ actor: 'alice' });
      expect(auditEventSchema.parse(record)).toEqual(record);
    }
  });
});
