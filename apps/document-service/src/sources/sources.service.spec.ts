import type { Access, AccessPolicy, Caller } from '@kb/auth';
import { ErrorKind } from '@kb/errors';

import { knowledgeBaseNotFound } from '../knowledge-bases/knowledge-bases.errors';
import type { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import { newAccess, TENANT } from '../testing/document-service.fixture';
import { createSourceSchema, type SourceView, type SyncView } from './source.model';
import type { SourceSyncService, SyncGuard } from './source-sync.service';
import type { SourcesRepository } from './sources.repository';
import { SourcesService } from './sources.service';

const FOLDER = 'f01de700-0000-4000-8000-000000000001';
const S3 = '53000000-0000-4000-8000-000000000002';

/** The tenant has created `kb` and no other knowledge base. */
const knowledgeBases = {
  requireExisting: async (_tenant: string, ids: string[]) => {
    const unknown = ids.filter((id) => id !== 'kb' && id !== 'default');
    if (unknown.length > 0) throw knowledgeBaseNotFound(unknown[0]!);
  },
} as unknown as KnowledgeBaseDirectory;

/** SourcesService over a map of sources and a sync that only runs its guard once. */
function sourcesFixture(accessNow: () => Access = () => newAccess()) {
  const stored = new Map<string, SourceView>();
  const repository = {
    insert: async (_tenant: string, source: SourceView & { createdBy: string; now: Date }) => {
      const view = { ...source, bucket: source.bucket ?? null } as SourceView;
      stored.set(view.id, view);
      return view;
    },
    find: async (_tenant: string, id: string) => stored.get(id),
    delete: async (_tenant: string, id: string) => stored.delete(id),
  } as unknown as SourcesRepository;
  const sync = { id: 'sync-1', status: 'running' } as unknown as SyncView;
  const syncs = {
    start: async () => sync,
    run: async (_tenant: string, guard: SyncGuard) => {
      await guard();
      return { ...sync, status: 'completed' };
    },
  } as unknown as SourceSyncService;
  const policy = { accessOf: async () => accessNow() } as unknown as AccessPolicy;
  const service = new SourcesService(
    repository,
    syncs,
    knowledgeBases,
    {
      S3_BUCKET: 'kb-documents',
      SOURCE_ALLOWLIST: { [TENANT]: [{ bucket: 'shared', prefix: 'docs/' }] },
    },
    policy,
    () => new Date('2026-11-22T10:00:00Z'),
  );
  const seed = (view: Partial<SourceView> & { id: string; kind: SourceView['kind'] }) =>
    stored.set(view.id, {
      knowledgeBaseId: 'default',
      bucket: null,
      prefix: '',
      ...view,
    } as SourceView);
  return { service, seed };
}

describe('SourcesService', () => {
  const s3 = (fields: Record<string, unknown> = {}) =>
    createSourceSchema.parse({
      name: 'docs',
      knowledgeBaseId: 'kb',
      kind: 's3',
      bucket: 'shared',
      prefix: 'docs/',
      ...fields,
    });

  it('creates a source with write, a granted bucket and an existing knowledge base', async () => {
    const { service } = sourcesFixture();
    await expect(
      service.create(TENANT, newAccess(), s3({ knowledgeBaseId: 'nope' })),
    ).rejects.toMatchObject({
      kind: ErrorKind.NotFound,
    });
    const reader = newAccess({ documentActions: new Set(['read']) });
    await expect(service.create(TENANT, reader, s3())).rejects.toMatchObject({
      code: 'permission_denied',
    });
    await expect(
      service.create(TENANT, newAccess(), s3({ prefix: 'other/' })),
    ).rejects.toMatchObject({
      code: 'source_not_allowed',
    });
    await expect(
      service.create(TENANT, newAccess(), s3({ bucket: 'kb-documents' })),
    ).rejects.toMatchObject({
      code: 'source_not_allowed',
    });
    const created = await service.create(TENANT, newAccess(), s3());
    expect(created).toMatchObject({
      kind: 's3',
      bucket: 'shared',
      prefix: 'docs/',
      knowledgeBaseId: 'kb',
    });
    expect(await service.get(TENANT, created.id)).toEqual(created);
    expect(await service.delete(TENANT, newAccess(), created.id)).toEqual({ sourceId: created.id });
    await expect(service.get(TENANT, created.id)).rejects.toMatchObject({
      kind: ErrorKind.NotFound,
    });
  });

  it('lets uploads write source:<id>/ ids of folder sources only (N13)', async () => {
    const { service, seed } = sourcesFixture();
    seed({ id: FOLDER, kind: 'folder' });
    seed({ id: S3, kind: 's3', bucket: 'shared', prefix: 'docs/' });
    expect(await service.uploadOptionsFor(TENANT, `source:${FOLDER}/a.md`)).toEqual({
      sourceSync: true,
    });
    expect(await service.uploadOptionsFor(TENANT, `source:${S3}/a.md`)).toEqual({});
    expect(await service.uploadOptionsFor(TENANT, 'notes/a.md')).toEqual({});
    expect(await service.uploadOptionsFor(TENANT, undefined)).toEqual({});
  });

  it('syncs S3 sources only, and stops when write is revoked during the sync (N15)', async () => {
    let access = newAccess();
    const { service, seed } = sourcesFixture(() => access);
    seed({ id: FOLDER, kind: 'folder' });
    seed({ id: S3, kind: 's3', bucket: 'shared', prefix: 'docs/' });
    const caller: Caller = { tenantId: TENANT, userId: 'alice', token: 't', roles: [], groups: [] };
    await expect(service.sync(TENANT, caller, newAccess(), FOLDER, true)).rejects.toMatchObject({
      code: 'source_not_syncable',
    });
    expect(await service.sync(TENANT, caller, newAccess(), S3, true)).toMatchObject({
      finished: true,
      sync: { status: 'completed' },
    });
    access = newAccess({ documentActions: new Set(['read']) });
    await expect(service.sync(TENANT, caller, newAccess(), S3, true)).rejects.toMatchObject({
      code: 'access_revoked',
    });
  });
});
