import { Topics } from '@kb/contracts';
import { ErrorKind } from '@kb/errors';

import {
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../testing/document-service.fixture';
import { createKnowledgeBaseSchema } from './knowledge-base.model';

const files = spool();
afterAll(() => files.cleanup());

/** Waits for the blob clean-up that runs after the answer. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 50 && !(await check()); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  expect(await check()).toBe(true);
}

describe('KnowledgeBaseBulkDelete', () => {
  let f: DocumentServiceFixture;
  const alice = newAccess();
  const bob = newAccess({ userId: 'bob' });
  const create = (id: string, tagRule: string[] = []) =>
    f.knowledgeBases.create(
      TENANT,
      alice,
      createKnowledgeBaseSchema.parse({ id, name: id, tagRule: { anyOf: tagRule } }),
    );
  const upload = (
    content: string,
    fields: Parameters<DocumentServiceFixture['documents']['upload']>[3],
    who = alice,
  ) => f.documents.upload(TENANT, who, files.file(content), fields);
  const removedEvents = () =>
    f.outbox
      .envelopes(Topics.document)
      .filter((e) => e.payload.kind === 'documents_removed')
      .map((e) => e.payload);

  beforeEach(() => {
    f = documentServiceFixture();
  });

  it('empties a knowledge base: deletes what only it holds, unlinks and retains the rest', async () => {
    await create('ops', ['runbook']);
    await create('other');
    const only = await upload('only in ops', { knowledgeBaseIds: ['ops'] });
    const shared = await upload('also in other', { knowledgeBaseIds: ['ops', 'other'] });
    const ruled = await upload('tagged', { knowledgeBaseIds: ['other'], tags: ['runbook'] });
    const blobOf = async (id: string) =>
      (await f.documentsRepository.findById(TENANT, id, 'all'))!.blobKey;
    const [onlyBlob, sharedBlob] = [await blobOf(only.id), await blobOf(shared.id)];
    expect(await f.blobs.exists(onlyBlob)).toBe(true);
    const writes = f.db.writes.length;

    const result = await f.collections.empty(TENANT, alice, 'ops');

    expect(result).toMatchObject({
      knowledgeBaseId: 'ops',
      status: 'completed',
      deletedCount: 2,
      unlinkedCount: 1,
      retainedCount: 1,
      indexRemoval: 'scheduled',
    });
    // The rows, their events and knowledge_base_emptied: one transaction.
    expect(new Set(f.db.writes.slice(writes).map((w) => w.trx)).size).toBe(1);
    expect(removedEvents()).toEqual([
      expect.objectContaining({
        documentIds: [only.id],
        knowledgeBaseId: 'ops',
        cause: 'emptied',
        jobId: result.jobId,
        batch: 0,
        batches: 1,
      }),
    ]);
    expect(f.outbox.envelopes(Topics.collection).map((e) => e.payload)).toContainEqual(
      expect.objectContaining({ kind: 'knowledge_base_emptied', deletedCount: 2 }),
    );
    await expect(f.documents.get(TENANT, alice, only.id)).rejects.toMatchObject({
      kind: ErrorKind.NotFound,
    });
    expect((await f.documents.get(TENANT, alice, shared.id)).knowledgeBaseIds).toEqual(['other']);
    expect((await f.documents.get(TENANT, alice, ruled.id)).knowledgeBaseIds).toContain('ops');
    expect(await f.generations.current(TENANT)).toBe(1);
    await eventually(async () => !(await f.blobs.exists(onlyBlob)));
    expect(await f.blobs.exists(sharedBlob)).toBe(true);
  });

  it('needs delete to empty, and answers 404 for a knowledge base the tenant has not', async () => {
    await create('ops');
    const writer = newAccess({ documentActions: new Set(['read', 'write']) });
    await expect(f.collections.empty(TENANT, writer, 'ops')).rejects.toMatchObject({
      kind: ErrorKind.PermissionDenied,
      code: 'permission_denied',
    });
    await expect(f.collections.empty(TENANT, alice, 'nope')).rejects.toMatchObject({
      kind: ErrorKind.NotFound,
    });
    await expect(f.collections.delete(TENANT, writer, 'ops', true)).rejects.toMatchObject({
      kind: ErrorKind.PermissionDenied,
    });
  });

  it('deletes with cascade what the caller reads, and moves what they cannot read to default', async () => {
    await create('ops');
    const mine = await upload('mine', { knowledgeBaseIds: ['ops'] });
    const hidden = await upload('bob’s', { knowledgeBaseIds: ['ops'] }, bob);
    // Bob's document is not alice's to read: it neither blocks nor counts.
    await expect(f.collections.delete(TENANT, alice, 'ops', false)).rejects.toMatchObject({
      code: 'knowledge_base_not_empty',
    });

    expect(await f.collections.delete(TENANT, alice, 'ops', true)).toEqual({
      id: 'ops',
      cascade: true,
      deletedCount: 1,
      unlinkedCount: 0,
      indexRemoval: 'scheduled',
    });
    await expect(f.knowledgeBases.get(TENANT, 'ops')).rejects.toMatchObject({
      kind: ErrorKind.NotFound,
    });
    expect(removedEvents()).toEqual([
      expect.objectContaining({ documentIds: [mine.id], cause: 'knowledge_base_deleted' }),
    ]);
    expect((await f.documents.get(TENANT, bob, hidden.id)).knowledgeBaseIds).toEqual(['default']);
  });
});
