import { auditEventSchema, Topics } from '@kb/contracts';
import { ErrorKind } from '@kb/errors';

import {
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../testing/document-service.fixture';

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
});
