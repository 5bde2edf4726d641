import { DEFAULT_CHUNKER, Topics } from '@kb/contracts';
import { ErrorKind } from '@kb/errors';

import {
  DEFAULTS,
  type DocumentServiceFixture,
  documentServiceFixture,
  newAccess,
  servedModels,
  spool,
  TENANT,
} from '../testing/document-service.fixture';
import {
  type CreateKnowledgeBase,
  createKnowledgeBaseSchema,
  updateKnowledgeBaseSchema,
} from './knowledge-base.model';

const files = spool();
afterAll(() => files.cleanup());

describe('KnowledgeBasesService', () => {
  let f: DocumentServiceFixture;
  const alice = newAccess();
  const input = (fields: Partial<CreateKnowledgeBase> & { id: string }): CreateKnowledgeBase =>
    createKnowledgeBaseSchema.parse({ name: fields.id, ...fields });
  const update = (id: string, body: unknown) =>
    f.knowledgeBases.update(TENANT, alice, id, updateKnowledgeBaseSchema.parse(body));

  beforeEach(() => {
    f = documentServiceFixture({
      models: servedModels({ [DEFAULTS.model]: 384, 'test-hashing-384': 384 }),
    });
  });

  it('creates a knowledge base with the deployment’s default pipeline', async () => {
    const created = await f.knowledgeBases.create(TENANT, alice, input({ id: 'handbooks' }));
    expect(created).toEqual({
      id: 'handbooks',
      name: 'handbooks',
      description: '',
      metadata: {},
      chunker: DEFAULT_CHUNKER,
      embeddingModel: DEFAULTS.model,
      embeddingDimension: 384,
      tagRule: { anyOf: [] },
      allowPrecomputedVectors: false,
      contextRerank: false,
      retentionDays: null,
      retentionFrom: 'uploaded',
      pii: 'off',
      parsing: { ocr: true, ocrLanguages: [], tableMode: 'records' },
      createdAt: f.now.toISOString(),
      updatedAt: f.now.toISOString(),
    });
    expect(await f.knowledgeBases.get(TENANT, 'handbooks')).toEqual(created);
    expect(await f.knowledgeBases.list(TENANT)).toEqual([created]);
  });

  it('lets only a tenant admin allow pre-computed vectors; anyone who may write turns them off (review N9)', async () => {
    const admin = newAccess({ userId: 'root', isAdmin: true });
    const denied = { code: 'permission_denied', kind: ErrorKind.PermissionDenied };
    await expect(
      f.knowledgeBases.create(
        TENANT,
        alice,
        input({ id: 'vectors', allowPrecomputedVectors: true }),
      ),
    ).rejects.toMatchObject(denied);
    await f.knowledgeBases.create(TENANT, alice, input({ id: 'vectors' }));
    await expect(update('vectors', { allowPrecomputedVectors: true })).rejects.toMatchObject(
      denied,
    );
    expect(await f.knowledgeBases.get(TENANT, 'vectors')).toMatchObject({
      allowPrecomputedVectors: false,
    });
    const allowed = await f.knowledgeBases.update(
      TENANT,
      admin,
      'vectors',
      updateKnowledgeBaseSchema.parse({ allowPrecomputedVectors: true }),
    );
    expect(allowed.allowPrecomputedVectors).toBe(true);
    // Sending the current value back, or any other edit, is not turning it on.
    await update('vectors', { allowPrecomputedVectors: true, description: 'kept' });
    expect(await update('vectors', { allowPrecomputedVectors: false })).toMatchObject({
      allowPrecomputedVectors: false,
      description: 'kept',
    });
    expect(
      await f.knowledgeBases.create(
        TENANT,
        admin,
        input({ id: 'imported', allowPrecomputedVectors: true }),
      ),
    ).toMatchObject({ allowPrecomputedVectors: true });
  });

  it('keeps the chunker and the served model it is created with', async () => {
    const chunker = { strategy: 'token', size: 256, overlap: 32 } as const;
    const created = await f.knowledgeBases.create(
      TENANT,
      alice,
      input({ id: 'tokens', chunker, embeddingModel: 'test-hashing-384' }),
    );
    expect(created).toMatchObject({ chunker, embeddingModel: 'test-hashing-384' });
  });

  it('refuses a model the deployment does not serve, and an id taken', async () => {
    await expect(
      f.knowledgeBases.create(TENANT, alice, input({ id: 'x', embeddingModel: 'gpt-embed' })),
    ).rejects.toMatchObject({
      kind: ErrorKind.InvalidArgument,
      code: 'embedding_model_not_served',
    });
    expect(await f.knowledgeBases.list(TENANT)).toEqual([]);

    await f.knowledgeBases.create(TENANT, alice, input({ id: 'x' }));
    await expect(f.knowledgeBases.create(TENANT, alice, input({ id: 'x' }))).rejects.toMatchObject({
      kind: ErrorKind.AlreadyExists,
      code: 'knowledge_base_exists',
    });
  });

  it('needs write', async () => {
    const reader = newAccess({ documentActions: new Set(['read']) });
    await expect(f.knowledgeBases.create(TENANT, reader, input({ id: 'x' }))).rejects.toMatchObject(
      { kind: ErrorKind.PermissionDenied },
    );
  });

  it('answers 409 to a change of chunker or model, and accepts the current value back', async () => {
    const chunker = { strategy: 'markdown', size: 800, overlap: 100, headingLevel: 2 } as const;
    await f.knowledgeBases.create(TENANT, alice, input({ id: 'handbooks', chunker }));

    await expect(update('handbooks', { chunker, name: 'Handbooks' })).resolves.toMatchObject({
      name: 'Handbooks',
      chunker,
    });
    await expect(update('handbooks', { embeddingModel: DEFAULTS.model })).resolves.toBeDefined();
    for (const body of [
      { chunker: { strategy: 'token', size: 256, overlap: 32 } },
      { chunker: 'not a chunker' },
      { embeddingModel: 'test-hashing-384' },
    ]) {
      await expect(update('handbooks', body)).rejects.toMatchObject({
        kind: ErrorKind.FailedPrecondition,
        code: 'immutable_field',
      });
    }
    expect((await f.knowledgeBases.get(TENANT, 'handbooks')).name).toBe('Handbooks');
    await expect(update('nope', { name: 'n' })).rejects.toMatchObject({ kind: ErrorKind.NotFound });
  });

  it('moves tagged documents in and out with their rule, in the rule’s transaction', async () => {
    const tagged = await f.documents.upload(TENANT, alice, files.file('ops'), {
      tags: ['runbook'],
    });
    await f.documents.upload(TENANT, alice, files.file('money'), { tags: ['invoice'] });
    const writes = f.db.writes.length;
    const wakes = f.relay.wakes;

    await f.knowledgeBases.create(
      TENANT,
      alice,
      input({ id: 'ops', tagRule: { anyOf: ['runbook'] } }),
    );
    const changed = f.db.writes.slice(writes);
    expect(changed.map((w) => [w.table, w.op, w.key])).toEqual([
      ['knowledge_bases', 'insert', 'ops'],
      ['documents', 'setMembership', tagged.id],
      ['outbox', 'insert', tagged.id], // attributes_changed (same pipeline: no re-drive)
    ]);
    expect(new Set(changed.map((w) => w.trx)).size).toBe(1);
    expect(f.relay.wakes).toBe(wakes + 1);
    const attributesChanged = () =>
      f.outbox
        .envelopes(Topics.document)
        .filter((e) => e.payload.kind === 'attributes_changed')
        .map((e) => e.payload);
    expect(attributesChanged()).toEqual([
      expect.objectContaining({
        documentId: tagged.id,
        attributes: expect.objectContaining({ knowledgeBaseIds: ['default', 'ops'] }),
      }),
    ]);

    await update('ops', { tagRule: { anyOf: [] } });
    expect((await f.documents.get(TENANT, alice, tagged.id)).knowledgeBaseIds).toEqual(['default']);
    expect(attributesChanged()).toHaveLength(2);
  });

  it('deletes a knowledge base only when no document the caller reads belongs to it', async () => {
    await f.knowledgeBases.create(TENANT, alice, input({ id: 'empty' }));
    await f.knowledgeBases.create(TENANT, alice, input({ id: 'used' }));
    await f.documents.upload(TENANT, alice, files.file('x'), { knowledgeBaseIds: ['used'] });

    expect(await f.collections.delete(TENANT, alice, 'empty', false)).toMatchObject({
      id: 'empty',
      deletedCount: 0,
    });
    await expect(f.knowledgeBases.get(TENANT, 'empty')).rejects.toMatchObject({
      kind: ErrorKind.NotFound,
    });
    await expect(f.collections.delete(TENANT, alice, 'used', false)).rejects.toMatchObject({
      kind: ErrorKind.FailedPrecondition,
      code: 'knowledge_base_not_empty',
    });
    await expect(f.collections.delete(TENANT, alice, 'gone', false)).rejects.toMatchObject({
      kind: ErrorKind.NotFound,
    });
  });

  it('lets only a tenant admin set or change a retention policy (ADR 52)', async () => {
    const admin = newAccess({ userId: 'root', isAdmin: true });
    await expect(
      f.knowledgeBases.create(TENANT, alice, input({ id: 'short', retentionDays: 30 })),
    ).rejects.toMatchObject({ code: 'permission_denied' });
    await f.knowledgeBases.create(TENANT, admin, input({ id: 'short', retentionDays: 30 }));
    await expect(
      f.knowledgeBases.update(TENANT, alice, 'short', { retentionDays: null }),
    ).rejects.toMatchObject({ code: 'permission_denied' });
    const changed = await f.knowledgeBases.update(TENANT, admin, 'short', {
      retentionDays: 90,
      retentionFrom: 'updated',
    });
    expect(changed).toMatchObject({ retentionDays: 90, retentionFrom: 'updated' });
    expect(
      await f.knowledgeBases.update(TENANT, admin, 'short', { retentionDays: null }),
    ).toMatchObject({ retentionDays: null, retentionFrom: 'updated' });
  });
});
