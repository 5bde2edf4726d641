import { DEFAULT_CHUNKER, pipelineOf, Topics } from '@kb/contracts';
import { ErrorKind } from '@kb/errors';

import {
  DEFAULTS,
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../testing/document-service.fixture';

const files = spool();
afterAll(() => files.cleanup());

const standard = { ...pipelineOf(TENANT, DEFAULT_CHUNKER, DEFAULTS.model, DEFAULTS) };
const tokenChunker = { strategy: 'token', size: 256, overlap: 32 } as const;
const tokenPipeline = pipelineOf(TENANT, tokenChunker, DEFAULTS.model, DEFAULTS);

/** `UploadDocument`, through `DocumentsService.upload` as every caller reaches it. */
describe('UploadDocument', () => {
  let f: DocumentServiceFixture;
  const alice = newAccess();
  const documentEvents = () => f.outbox.envelopes(Topics.document);
  /** The transactions that wrote since `from` (an index into the write log). */
  const transactionsSince = (from: number) =>
    new Set(f.db.writes.slice(from).map((write) => write.trx));

  beforeEach(() => {
    f = documentServiceFixture();
  });

  const upload = (content = 'hello', fields = {}, access = alice) =>
    f.documents.upload(TENANT, access, files.file(content), fields);

  /** A knowledge base with the token chunker (a pipeline of its own) and an optional tag rule. */
  const createTokenBase = (id: string, anyOf: string[] = []) =>
    f.knowledgeBases.create(TENANT, alice, {
      id,
      name: id,
      description: '',
      chunker: tokenChunker,
      tagRule: { anyOf },
    });

  describe('upload', () => {
    it('stores the original, then the row and its uploaded event in one transaction', async () => {
      const document = await upload('hello', { tags: ['a', 'a'], metadata: { team: 'x' } });

      expect(document).toMatchObject({
        tenantId: TENANT,
        version: 1,
        status: 'pending',
        filename: 'a.md',
        title: 'a.md',
        tags: ['a'],
        metadata: { team: 'x' },
        knowledgeBaseIds: ['default'],
        explicitKnowledgeBaseIds: ['default'],
        ownerId: 'alice',
        stageTimes: { pending: f.now.toISOString() },
      });
      expect(document.duplicate).toBeUndefined();
      expect(await f.blobs.exists(`blobs/${TENANT}/sha256/${document.sha256}`)).toBe(true);
      const [event] = documentEvents();
      expect(documentEvents()).toHaveLength(1);
      expect(event).toMatchObject({
        tenantId: TENANT,
        key: document.id,
        payload: {
          kind: 'uploaded',
          documentId: document.id,
          version: 1,
          blob: { bucket: 'kb-documents', key: `blobs/${TENANT}/sha256/${document.sha256}` },
          attributes: { knowledgeBaseIds: ['default'], tags: ['a'], principals: ['u:alice'] },
          pipelines: [{ ...standard, knowledgeBaseIds: ['default'] }],
        },
      });
      expect(transactionsSince(0).size).toBe(1); // the row, the event and the audit record
      expect(f.db.writes.map((write) => write.table)).toEqual(['documents', 'outbox', 'outbox']);
      expect(f.relay.wakes).toBe(1);
    });

    it('drops control characters from the file name (U+0000 cannot be stored)', async () => {
      const named = await f.documents.upload(
        TENANT,
        alice,
        files.file('named', 'rep\u0000ort\u001f.md'),
        {},
      );
      expect(named).toMatchObject({ filename: 'report.md', title: 'report.md' });
      const unnamed = await f.documents.upload(TENANT, alice, files.file('unnamed', '\u0000'), {});
      expect(unnamed.filename).toBe('upload');
    });

    it('joins the knowledge bases whose tag rule matches, after the explicit ones', async () => {
      await createTokenBase('runbooks', ['runbook']);
      const document = await upload('ops', { tags: ['runbook'] });
      expect(document.knowledgeBaseIds).toEqual(['default', 'runbooks']);
      expect(document.explicitKnowledgeBaseIds).toEqual(['default']);
      const uploaded = documentEvents().find((e) => e.key === document.id)!;
      expect(uploaded.payload).toMatchObject({
        pipelines: [
          { ...standard, knowledgeBaseIds: ['default'] },
          { ...tokenPipeline, knowledgeBaseIds: ['runbooks'] },
        ],
      });
    });

    it('answers a duplicate the caller can read with the existing document, and writes nothing', async () => {
      const first = await upload('same');
      const writes = f.db.writes.length;
      const again = await upload('same');
      expect(again).toMatchObject({ id: first.id, duplicate: true });
      expect(f.db.writes).toHaveLength(writes);

      // Someone who cannot read the first gets a document of their own, and the original is
      // written again as for new content: skipping it would time as "these bytes are here".
      const puts = jest.spyOn(f.blobs, 'put');
      const exists = jest.spyOn(f.blobs, 'exists');
      const zoe = await upload('same', {}, newAccess({ userId: 'zoe' }));
      expect(zoe.id).not.toBe(first.id);
      expect(zoe.duplicate).toBeUndefined();
      expect(puts.mock.calls.map(([key]) => key)).toEqual([`blobs/${TENANT}/sha256/${zoe.sha256}`]);
      expect(exists).not.toHaveBeenCalled();
    });

    it('refuses an empty file and an unknown knowledge base before storing anything', async () => {
      await expect(upload('')).rejects.toMatchObject({
        kind: ErrorKind.InvalidArgument,
        code: 'empty_file',
      });
      await expect(upload('x', { knowledgeBaseIds: ['nope'] })).rejects.toMatchObject({
        kind: ErrorKind.InvalidArgument,
        code: 'unknown_knowledge_base',
      });
      expect(f.db.writes).toEqual([]);
      expect(f.blobs.keys()).toEqual([]);
    });

    it('leaves nothing behind when the transaction fails', async () => {
      const doc = {
        id: '0b7e4a52-7d1f-4c59-9a55-7f5e0c3f6a10',
        tenantId: TENANT,
        title: 't',
        filename: 'a.md',
        contentType: 'text/markdown',
        sizeBytes: 1,
        sha256: 'c'.repeat(64),
        blobKey: `blobs/sha256/${'c'.repeat(64)}`,
        metadata: {},
        tags: [],
        knowledgeBaseIds: ['default'],
        ownerId: 'alice',
        acl: { users: [], groups: [], roles: [], tenant: false },
        now: f.now,
      };
      await f.documents.register(doc, []);
      await expect(f.documents.register(doc, [])).rejects.toThrow(/duplicate key/);
      expect(documentEvents()).toHaveLength(1);
      expect(f.transactions.rolledBack).toBe(1);
    });
  });

  describe('external ids', () => {
    it('makes a second upload with the same external id the next version of that document', async () => {
      const first = await upload('one', { externalId: 'docs/a.md' });
      expect(first).toMatchObject({ version: 1, externalId: 'docs/a.md' });
      const second = await upload('two', { externalId: 'docs/a.md', tags: ['b'] });
      expect(second).toMatchObject({ id: first.id, version: 2, tags: ['b'] });
      const same = await upload('two', { externalId: 'docs/a.md', tags: ['b'] });
      expect(same).toMatchObject({ id: first.id, version: 2, unchanged: true });
      expect((await f.documents.list(TENANT, alice, 10)).items).toHaveLength(1);
    });

    it('keeps two external ids with the same content apart, and refuses one the caller cannot read', async () => {
      const a = await upload('same', { externalId: 'a' });
      const b = await upload('same', { externalId: 'b' });
      expect(b.id).not.toBe(a.id);
      expect(b.duplicate).toBeUndefined();
      const zoe = newAccess({ userId: 'zoe', principals: ['u:zoe'] });
      await expect(upload('other', { externalId: 'a' }, zoe)).rejects.toMatchObject({
        code: 'invalid_external_id',
      });
    });

    it('answers an id held by an unreadable document exactly as an invalid id: no oracle (N13)', async () => {
      await upload('secret', { externalId: 'hr/salaries.xlsx' });
      const zoe = newAccess({ userId: 'zoe', principals: ['u:zoe'] });
      const refusal = async (externalId: string) => {
        const error = (await upload('probe', { externalId }, zoe).catch((e: unknown) => e)) as {
          code: string;
          kind: ErrorKind;
          message: string;
        };
        return { code: error.code, kind: error.kind, message: error.message };
      };
      const held = await refusal('hr/salaries.xlsx');
      const invalid = await refusal('hr/salaries.xlsx\u0007');
      expect(held).toEqual({
        code: 'invalid_external_id',
        kind: ErrorKind.InvalidArgument,
        message: 'external id "hr/salaries.xlsx" cannot be used; choose another',
      });
      expect({ ...invalid, message: invalid.message.replace('\u0007', '') }).toEqual(held);
      // Nothing was written for the refused upload, and the holder is untouched.
      expect((await f.documents.list(TENANT, alice, 10)).items).toHaveLength(1);
      expect((await f.documents.list(TENANT, zoe, 10)).items).toHaveLength(0);
    });

    it('answers the concurrent-upload race on an unreadable holder as an unusable id too', async () => {
      const hidden = await upload('secret', { externalId: 'x/1' });
      const zoe = newAccess({ userId: 'zoe', principals: ['u:zoe'] });
      // The holder appears between the first look-up and the insert.
      const register = f.documents.register(
        {
          id: '00000000-0000-4000-8000-000000000001',
          tenantId: TENANT,
          title: 'probe',
          filename: 'probe.md',
          contentType: 'text/markdown',
          sizeBytes: 5,
          sha256: 'f'.repeat(64),
          blobKey: 'blobs/t1/sha256/probe',
          metadata: {},
          tags: [],
          knowledgeBaseIds: ['default'],
          ownerId: 'zoe',
          acl: { users: [], groups: [], roles: [], tenant: false },
          externalId: 'x/1',
          now: f.now,
        },
        zoe.principals,
      );
      await expect(register).rejects.toMatchObject({ code: 'invalid_external_id' });
      await expect(
        f.documents.register(
          {
            id: '00000000-0000-4000-8000-000000000002',
            tenantId: TENANT,
            title: 'probe',
            filename: 'probe.md',
            contentType: 'text/markdown',
            sizeBytes: 5,
            sha256: 'f'.repeat(64),
            blobKey: 'blobs/t1/sha256/probe',
            metadata: {},
            tags: [],
            knowledgeBaseIds: ['default'],
            ownerId: 'alice',
            acl: { users: [], groups: [], roles: [], tenant: false },
            externalId: 'x/1',
            now: f.now,
          },
          alice.principals,
        ),
      ).rejects.toMatchObject({ code: 'external_id_taken' });
      expect(hidden.externalId).toBe('x/1');
    });

    it('reserves the source: prefix for the source sync (400 external_id_reserved)', async () => {
      const refused = await upload('planted', { externalId: 'source:s1/guide.md' }).catch(
        (e: unknown) => e,
      );
      expect(refused).toMatchObject({
        code: 'external_id_reserved',
        kind: ErrorKind.InvalidArgument,
        message: 'external ids starting "source:" are reserved for source syncs',
      });
      expect((await f.documents.list(TENANT, alice, 10)).items).toHaveLength(0);
      expect(f.blobs.keys()).toEqual([]);
      // The sync says so explicitly, and its next version goes through the same way.
      const synced = await f.documents.upload(
        TENANT,
        alice,
        files.file('synced'),
        { externalId: 'source:s1/guide.md' },
        undefined,
        { sourceSync: true },
      );
      expect(synced).toMatchObject({ version: 1, externalId: 'source:s1/guide.md' });
      await expect(upload('again', { externalId: 'source:s1/guide.md' })).rejects.toMatchObject({
        code: 'external_id_reserved',
      });
      // Only the prefix is reserved: an id merely holding "source:" elsewhere is anyone's.
      await expect(upload('mine', { externalId: 'docs/source:1' })).resolves.toMatchObject({
        version: 1,
      });
    });
  });
});
