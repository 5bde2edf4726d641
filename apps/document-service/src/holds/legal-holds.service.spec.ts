import { Topics } from '@kb/contracts';

import { createKnowledgeBaseSchema } from '../knowledge-bases/knowledge-base.model';
import {
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../testing/document-service.fixture';
import { placeHoldSchema } from './legal-hold.model';

const files = spool();
afterAll(() => files.cleanup());

describe('legal holds', () => {
  let f: DocumentServiceFixture;
  const admin = newAccess({ userId: 'root', isAdmin: true });
  const alice = newAccess();
  const upload = (
    content: string,
    fields: Parameters<DocumentServiceFixture['documents']['upload']>[3] = {},
  ) => f.documents.upload(TENANT, alice, files.file(content), fields);
  const place = (body: unknown) => f.legalHolds.place(TENANT, admin, placeHoldSchema.parse(body));
  const auditActions = () =>
    f.outbox.envelopes(Topics.audit).map((e) => (e.payload as { action: string }).action);

  beforeEach(async () => {
    f = documentServiceFixture();
    for (const id of ['ops', 'other']) {
      await f.knowledgeBases.create(
        TENANT,
        admin,
        createKnowledgeBaseSchema.parse({ id, name: id }),
      );
    }
  });

  it('refuses to delete a held document with 409 legal_hold naming the hold, until it is released', async () => {
    const doc = await upload('evidence');
    const hold = await place({ name: 'Case 42', documentIds: [doc.id] });

    await expect(f.documents.delete(TENANT, admin, doc.id)).rejects.toMatchObject({
      code: 'legal_hold',
      message: expect.stringContaining('"Case 42"'),
    });
    await f.legalHolds.release(TENANT, admin, hold.id, 'case closed');
    await expect(f.documents.delete(TENANT, admin, doc.id)).resolves.toMatchObject({
      documentId: doc.id,
    });
    expect(auditActions()).toEqual(
      expect.arrayContaining(['legal_hold_placed', 'legal_hold_released', 'document_deleted']),
    );
  });

  it('holds by filter and by knowledge base', async () => {
    const tagged = await upload('tagged', { tags: ['litigation'] });
    const inOps = await upload('in ops', { knowledgeBaseIds: ['ops'] });
    const free = await upload('free');
    await place({ name: 'tagged', where: { tags: 'litigation' } });
    await place({ name: 'ops', knowledgeBaseId: 'ops' });

    await expect(f.documents.delete(TENANT, admin, tagged.id)).rejects.toMatchObject({
      code: 'legal_hold',
    });
    await expect(f.documents.delete(TENANT, admin, inOps.id)).rejects.toMatchObject({
      message: expect.stringContaining('"ops"'),
    });
    await expect(f.documents.delete(TENANT, admin, free.id)).resolves.toBeDefined();
  });

  it('leaves held documents in an emptied knowledge base and reports them', async () => {
    const held = await upload('held', { knowledgeBaseIds: ['ops'] });
    const gone = await upload('gone', { knowledgeBaseIds: ['ops'] });
    await place({ name: 'Case 7', documentIds: [held.id] });

    const result = await f.collections.empty(TENANT, admin, 'ops');

    expect(result).toMatchObject({
      deletedCount: 1,
      held: { count: 1, reason: 'legal_hold', holds: ['Case 7'] },
    });
    expect(await f.documentsRepository.findById(TENANT, gone.id, 'all')).toBeUndefined();
    const kept = await f.documentsRepository.findById(TENANT, held.id, 'all');
    expect(kept?.knowledgeBaseIds).toEqual(['ops']);
  });

  it('refuses to delete a held knowledge base; a cascade keeps held documents', async () => {
    const held = await upload('held', { knowledgeBaseIds: ['other'] });
    await upload('gone', { knowledgeBaseIds: ['other'] });
    const kbHold = await place({ name: 'kb', knowledgeBaseId: 'other' });

    await expect(f.collections.delete(TENANT, admin, 'other', true)).rejects.toMatchObject({
      code: 'legal_hold',
    });
    await f.legalHolds.release(TENANT, admin, kbHold.id, '');
    await place({ name: 'doc', documentIds: [held.id] });

    const result = await f.collections.delete(TENANT, admin, 'other', true);

    expect(result).toMatchObject({ deletedCount: 1, held: { count: 1, holds: ['doc'] } });
    const kept = await f.documentsRepository.findById(TENANT, held.id, 'all');
    expect(kept?.knowledgeBaseIds).toEqual(['default']);
  });

  it('is for tenant admins; a release is final; an unknown knowledge base or filter is refused', async () => {
    await expect(place({ name: 'x', knowledgeBaseId: 'nope' })).rejects.toMatchObject({
      code: 'knowledge_base_not_found',
    });
    await expect(place({ name: 'x', where: { nope: 1 } })).rejects.toMatchObject({
      code: 'invalid_filter',
    });
    await expect(
      f.legalHolds.place(TENANT, alice, placeHoldSchema.parse({ name: 'x', where: {} })),
    ).rejects.toMatchObject({ code: 'permission_denied' });
    const hold = await place({ name: 'all', where: {} });
    await upload('anything');
    expect(await f.legalHolds.get(TENANT, admin, hold.id)).toMatchObject({
      state: 'active',
      heldDocuments: 1,
    });
    await f.legalHolds.release(TENANT, admin, hold.id, 'done');
    await expect(f.legalHolds.release(TENANT, admin, hold.id, 'again')).rejects.toMatchObject({
      code: 'hold_released',
    });
    expect(await f.legalHolds.list(TENANT, admin, { state: 'released', limit: 10 })).toEqual([
      expect.objectContaining({ id: hold.id, releasedBy: 'root', releaseReason: 'done' }),
    ]);
    expect(() =>
      placeHoldSchema.parse({ name: 'two', knowledgeBaseId: 'ops', where: {} }),
    ).toThrow();
  });
});
