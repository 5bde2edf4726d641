import type { Action } from '@kb/auth';
import { DEFAULT_CHUNKER, INACTIVE_TAG, pipelineOf, Topics, toTenantId } from '@kb/contracts';
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

describe('DocumentsService', () => {
  let f: DocumentServiceFixture;
  const alice = newAccess();
  const documentEvents = () => f.outbox.envelopes(Topics.document);
  const kinds = () => documentEvents().map((event) => event.payload.kind);
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

  describe('replaceContent', () => {
    it('moves the document to its next version with its uploaded event, and drops the unused original', async () => {
      const first = await upload('v1');
      f.now = new Date('2026-11-22T11:00:00Z');
      const writes = f.db.writes.length;
      const second = await f.documents.replaceContent(TENANT, alice, first.id, files.file('v2'));

      expect(second).toMatchObject({ id: first.id, version: 2, status: 'pending' });
      expect(second.stageTimes).toEqual({ pending: '2026-11-22T11:00:00.000Z' });
      expect(kinds()).toEqual(['uploaded', 'uploaded']);
      expect(documentEvents()[1]!.payload).toMatchObject({ version: 2, sha256: second.sha256 });
      expect(transactionsSince(writes).size).toBe(1);
      expect(await f.blobs.exists(`blobs/${TENANT}/sha256/${first.sha256}`)).toBe(false);
      expect(await f.blobs.exists(`blobs/${TENANT}/sha256/${second.sha256}`)).toBe(true);
    });

    it('changes nothing for the current content', async () => {
      const first = await upload('same');
      const unchanged = await f.documents.replaceContent(
        TENANT,
        alice,
        first.id,
        files.file('same'),
      );
      expect(unchanged).toMatchObject({ version: 1, unchanged: true });
      expect(kinds()).toEqual(['uploaded']);
    });
  });

  describe('inactive', () => {
    it('sends the indexes the inactive marker without touching the stored tags, and takes it back', async () => {
      const document = await upload('hello', { tags: ['a'] });
      const off = await f.documents.edit(TENANT, alice, document.id, { inactive: true });
      expect(off).toMatchObject({ state: 'inactive', tags: ['a'], version: 1 });
      expect(documentEvents().at(-1)!.payload).toMatchObject({
        kind: 'attributes_changed',
        attributes: { tags: ['a', INACTIVE_TAG] },
        spaces: [TENANT],
      });
      const on = await f.documents.edit(TENANT, alice, document.id, { inactive: false });
      expect(on).toMatchObject({ state: 'active', tags: ['a'] });
      expect(documentEvents().at(-1)!.payload).toMatchObject({
        kind: 'attributes_changed',
        attributes: { tags: ['a'] },
      });
    });

    it('keeps a new version of an inactive document out of search too', async () => {
      const document = await upload('v1');
      await f.documents.edit(TENANT, alice, document.id, { inactive: true });
      await f.documents.replaceContent(TENANT, alice, document.id, files.file('v2'));
      expect(documentEvents().at(-1)!.payload).toMatchObject({
        kind: 'uploaded',
        version: 2,
        attributes: { tags: [INACTIVE_TAG] },
      });
    });
  });

  describe('edit', () => {
    it('writes the attributes and attributes_changed in one transaction, without a re-drive', async () => {
      const document = await upload();
      const writes = f.db.writes.length;
      const edited = await f.documents.edit(TENANT, alice, document.id, {
        metadata: { team: 'y' },
      });
      expect(edited).toMatchObject({ version: 1, metadata: { team: 'y' }, tags: [] });
      expect(kinds()).toEqual(['uploaded', 'attributes_changed']);
      expect(documentEvents()[1]!.payload).toEqual({
        kind: 'attributes_changed',
        documentId: document.id,
        attributes: { knowledgeBaseIds: ['default'], tags: [], metadata: { team: 'y' } },
        spaces: [TENANT],
        metaVersion: 1,
      });
      expect(transactionsSince(writes).size).toBe(1);
    });

    it('re-drives the current version when a new knowledge base brings a new pipeline', async () => {
      await createTokenBase('runbooks', ['runbook']);
      const document = await upload();
      const writes = f.db.writes.length;
      const edited = await f.documents.edit(TENANT, alice, document.id, { tags: ['runbook'] });

      expect(edited.knowledgeBaseIds).toEqual(['default', 'runbooks']);
      expect(kinds()).toEqual(['uploaded', 'uploaded', 'attributes_changed']);
      const [, redrive, changed] = documentEvents();
      expect(redrive!.payload).toMatchObject({
        version: 1,
        pipelines: [
          { ...standard, knowledgeBaseIds: ['default'] },
          { ...tokenPipeline, knowledgeBaseIds: ['runbooks'] },
        ],
      });
      expect(changed!.payload).toMatchObject({ spaces: [TENANT, tokenPipeline.space] });
      expect(transactionsSince(writes).size).toBe(1);

      // Leaving it needs no re-drive: the event names the one space it stays in.
      await f.documents.edit(TENANT, alice, document.id, { tags: [] });
      expect(kinds().slice(3)).toEqual(['attributes_changed']);
      expect(documentEvents()[3]!.payload).toMatchObject({ spaces: [TENANT] });
    });

    it('needs write, and refuses knowledge bases the tenant has not created', async () => {
      const document = await upload();
      const reader = newAccess({ documentActions: new Set(['read']) });
      await expect(
        f.documents.edit(TENANT, reader, document.id, { tags: [] }),
      ).rejects.toMatchObject({ kind: ErrorKind.PermissionDenied });
      await expect(
        f.documents.edit(TENANT, alice, document.id, { knowledgeBaseIds: ['nope'] }),
      ).rejects.toMatchObject({ code: 'unknown_knowledge_base' });
      expect(kinds()).toEqual(['uploaded']);
    });
  });

  describe('delete', () => {
    it('deletes the row with its deleted event, and the original once nothing shares it', async () => {
      const first = await upload('shared');
      const other = await upload('shared', {}, newAccess({ userId: 'zoe' }));
      const writes = f.db.writes.length;

      // Not told that zoe's document, which alice cannot read, still uses the bytes (review M4).
      expect(await f.documents.delete(TENANT, alice, first.id)).toEqual({
        documentId: first.id,
        indexRemoval: 'scheduled',
      });
      expect(f.blobs.keys()).toEqual([`blobs/${TENANT}/sha256/${first.sha256}`]);
      expect(transactionsSince(writes).size).toBe(1);
      expect(documentEvents().at(-1)!.payload).toEqual({
        kind: 'deleted',
        documentId: first.id,
        metaVersion: 1,
      });
      const zoe = newAccess({ userId: 'zoe' });
      expect(await f.documents.delete(TENANT, zoe, other.id)).not.toHaveProperty('blobDeleted');
      expect(f.blobs.keys()).toEqual([]);
    });

    it('tells a tenant admin, who sees every document, whether the original went', async () => {
      const admin = newAccess({ userId: 'root', isAdmin: true });
      const first = await upload('shared');
      const other = await upload('shared', {}, newAccess({ userId: 'zoe' }));
      expect(await f.documents.delete(TENANT, admin, first.id)).toEqual({
        documentId: first.id,
        blobDeleted: false,
        indexRemoval: 'scheduled',
      });
      expect(await f.documents.delete(TENANT, admin, other.id)).toMatchObject({
        blobDeleted: true,
      });
    });

    it('keeps each tenant’s originals apart: a delete says nothing about another tenant’s files', async () => {
      const other = toTenantId('t2');
      const theirs = await f.documents.upload(
        other,
        newAccess({ tenantId: other }),
        files.file('the same bytes'),
        {},
      );
      const ours = await upload('the same bytes');
      expect(ours.duplicate).toBeUndefined();
      expect(f.blobs.keys().sort()).toEqual(
        [`blobs/${other}/sha256/${theirs.sha256}`, `blobs/${TENANT}/sha256/${ours.sha256}`].sort(),
      );
      // Before per-tenant keys this answered false: t2's document shared the object.
      const admin = newAccess({ isAdmin: true });
      expect(await f.documents.delete(TENANT, admin, ours.id)).toMatchObject({ blobDeleted: true });
      expect(f.blobs.keys()).toEqual([`blobs/${other}/sha256/${theirs.sha256}`]);
    });

    it('answers 404 for another tenant’s or an unreadable document, and needs delete', async () => {
      const document = await upload();
      const t2 = toTenantId('t2');
      await expect(
        f.documents.delete(t2, newAccess({ tenantId: t2, isAdmin: true }), document.id),
      ).rejects.toMatchObject({ kind: ErrorKind.NotFound });
      await expect(
        f.documents.delete(TENANT, newAccess({ userId: 'bob' }), document.id),
      ).rejects.toMatchObject({ kind: ErrorKind.NotFound });
      const writer = newAccess({ documentActions: new Set(['read', 'write']) });
      await expect(f.documents.delete(TENANT, writer, document.id)).rejects.toMatchObject({
        kind: ErrorKind.PermissionDenied,
      });
      expect(kinds()).toEqual(['uploaded']);
    });
  });

  describe('per-document grants (ADR 54)', () => {
    it('lets a writer or deleter of one document change or delete it without the tenant-wide role', async () => {
      const document = await upload('granted', {
        acl: {
          users: [],
          groups: [],
          roles: [],
          tenant: false,
          writers: { users: ['wes'], groups: [] },
          deleters: { users: [], groups: ['cleanup'] },
        },
      });
      const readOnly = new Set<Action>(['read']);
      const wes = newAccess({ userId: 'wes', documentActions: readOnly });
      const dee = newAccess({
        userId: 'dee',
        principals: ['u:dee', 'g:cleanup'],
        documentActions: readOnly,
      });
      // A grantee reads the document: the grant is among its principals.
      await expect(f.documents.get(TENANT, wes, document.id)).resolves.toMatchObject({
        id: document.id,
      });
      await expect(
        f.documents.edit(TENANT, wes, document.id, { tags: ['w'] }),
      ).resolves.toMatchObject({ tags: ['w'] });
      // Write is not delete, and delete is not write.
      await expect(f.documents.delete(TENANT, wes, document.id)).rejects.toMatchObject({
        kind: ErrorKind.PermissionDenied,
      });
      await expect(
        f.documents.edit(TENANT, dee, document.id, { tags: ['d'] }),
      ).rejects.toMatchObject({ kind: ErrorKind.PermissionDenied });
      // Another document grants them nothing.
      const other = await upload('not granted', {
        acl: { users: ['wes'], groups: [], roles: [], tenant: false },
      });
      await expect(f.documents.edit(TENANT, wes, other.id, { tags: ['w'] })).rejects.toMatchObject({
        kind: ErrorKind.PermissionDenied,
      });
      await expect(f.documents.delete(TENANT, dee, document.id)).resolves.toMatchObject({
        documentId: document.id,
      });
    });
  });

  describe('setAcl', () => {
    it('changes who may read it, with acl_changed and an audit record in one transaction', async () => {
      const document = await upload();
      const writes = f.db.writes.length;
      const acl = { users: ['bob'], groups: [], roles: [], tenant: false };
      const updated = await f.documents.setAcl(TENANT, alice, document.id, acl);

      expect(updated.acl).toEqual(acl);
      expect(documentEvents().at(-1)!.payload).toEqual({
        kind: 'acl_changed',
        documentId: document.id,
        principals: ['u:alice', 'u:bob'],
        metaVersion: 1,
      });
      expect(f.outbox.envelopes(Topics.audit).map((e) => e.payload)).toEqual([
        expect.objectContaining({ actor: 'alice', action: 'document_uploaded' }),
        expect.objectContaining({ actor: 'alice', action: 'document_acl_changed' }),
      ]);
      expect(transactionsSince(writes).size).toBe(1);
      await expect(
        f.documents.get(TENANT, newAccess({ userId: 'bob' }), document.id),
      ).resolves.toMatchObject({ id: document.id });
      // Each change moves the meta version on, so indexing can tell a stale event (ADR 18).
      await f.documents.setAcl(TENANT, alice, document.id, { ...acl, users: [] });
      await f.documents.edit(TENANT, alice, document.id, { tags: ['x'] });
      expect(
        documentEvents()
          .slice(-2)
          .map((e) => [e.payload.kind, 'metaVersion' in e.payload && e.payload.metaVersion]),
      ).toEqual([
        ['acl_changed', 2],
        ['attributes_changed', 3],
      ]);
    });

    it('is for the owner or a tenant admin only', async () => {
      const document = await upload('x', {
        acl: { users: ['bob'], groups: [], roles: [], tenant: false },
      });
      const bob = newAccess({ userId: 'bob' });
      await expect(
        f.documents.setAcl(TENANT, bob, document.id, {
          users: [],
          groups: [],
          roles: [],
          tenant: true,
        }),
      ).rejects.toMatchObject({ kind: ErrorKind.PermissionDenied });
      expect(f.outbox.envelopes(Topics.audit).map((e) => e.payload.action)).toEqual([
        'document_uploaded',
      ]);
    });
  });

  describe('applyStatus', () => {
    it('only moves the current version forward, and never out of a final status', async () => {
      const document = await upload();
      const apply = (status: 'parsing' | 'embedding' | 'indexed' | 'failed', version = 1) =>
        f.documents.applyStatus(
          TENANT,
          {
            documentId: document.id,
            version,
            status,
            chunkCount: status === 'indexed' ? 3 : undefined,
          },
          new Date('2026-11-22T10:05:00Z'),
        );
      const status = async () => (await f.documents.get(TENANT, alice, document.id)).status;

      await apply('embedding');
      expect(await status()).toBe('embedding');
      await apply('parsing'); // late
      await apply('indexed', 2); // another version
      expect(await status()).toBe('embedding');
      await apply('indexed');
      await apply('failed'); // final
      const view = await f.documents.get(TENANT, alice, document.id);
      expect(view).toMatchObject({ status: 'indexed', chunkCount: 3, failure: null });
      expect(Object.keys(view.stageTimes).sort()).toEqual(['embedding', 'indexed', 'pending']);
      expect(kinds()).toEqual(['uploaded']); // status changes publish nothing
    });
  });

  it('pages through the documents the caller may read, newest first', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      f.now = new Date(Date.UTC(2026, 0, 1, 0, 0, i));
      ids.push((await upload(`doc ${i}`)).id);
    }
    await upload('not hers', {}, newAccess({ userId: 'zoe' }));
    const first = await f.documents.list(TENANT, alice, 3);
    const second = await f.documents.list(TENANT, alice, 3, first.nextCursor!);
    expect([...first.items, ...second.items].map((d) => d.id)).toEqual([...ids].reverse());
    expect(second.nextCursor).toBeNull();
    await expect(f.documents.list(TENANT, alice, 3, 'garbage')).rejects.toMatchObject({
      code: 'invalid_cursor',
    });
  });
});
