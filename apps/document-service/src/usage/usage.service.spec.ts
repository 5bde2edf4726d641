import type { Access } from '@kb/auth';
import { type TenantId, toTenantId } from '@kb/contracts';
import { QuotaExceededError } from '@kb/errors';

import type { QuotaRow, Stored, UsageRepository } from './usage.repository';
import { type QuotaConfig, UsageService } from './usage.service';

const tenant: TenantId = toTenantId('t1');
const admin = { tenantId: tenant, userId: 'ada', isAdmin: true } as unknown as Access;
const member = { tenantId: tenant, userId: 'bob', isAdmin: false } as unknown as Access;
const none: QuotaConfig = {
  QUOTA_MAX_DOCUMENTS: 0,
  QUOTA_MAX_BYTES: 0,
  QUOTA_MAX_KNOWLEDGE_BASES: 0,
  QUOTA_MAX_SEARCHES_PER_DAY: 0,
};

/** The repository's state in memory: quota rows, and what each scope stores. */
function setup(config: QuotaConfig = none, stored: Record<string, Stored> = {}, kbCount = 0) {
  const rows = new Map<string, QuotaRow>();
  const repository = {
    quotas: async () => Promise.resolve([...rows.values()]),
    setQuotas: async (_t: TenantId, row: QuotaRow) =>
      Promise.resolve(void rows.set(row.knowledgeBaseId, row)),
    storedIn: jest.fn(async (_t: TenantId, kb: string) =>
      Promise.resolve(stored[kb] ?? { documents: 0, bytes: 0, chunks: 0 }),
    ),
    knowledgeBaseCount: async () => Promise.resolve(kbCount),
    knowledgeBaseExists: async (_t: TenantId, id: string) => Promise.resolve(id === 'kb-a'),
  };
  const service = new UsageService(
    repository as unknown as UsageRepository,
    config,
    () => new Date('2026-11-27T12:00:00Z'),
  );
  return { service, repository };
}

describe('UsageService quotas', () => {
  it('counts nothing on upload when no limit is set anywhere', async () => {
    const { service, repository } = setup();
    await service.beforeUpload(tenant, ['default'], 10);
    expect(repository.storedIn).not.toHaveBeenCalled();
  });

  it('refuses a document past the tenant\u2019s limit with the limit and the use', async () => {
    const { service } = setup(none, { '': { documents: 2, bytes: 10, chunks: 0 } });
    await service.setQuotas(tenant, admin, { maxDocuments: 2 });
    const refused = await service.beforeUpload(tenant, ['default'], 1).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QuotaExceededError);
    expect(refused).toMatchObject({
      code: 'quota_exceeded',
      kind: 'permission_denied',
      details: { quota: 'documents', limit: 2, used: 2 },
    });
  });

  it('refuses bytes past a knowledge base\u2019s limit, and only for uploads into it', async () => {
    const { service } = setup(none, { 'kb-a': { documents: 1, bytes: 900, chunks: 0 } });
    await service.setQuotas(tenant, admin, { knowledgeBaseId: 'kb-a', maxBytes: 1000 });
    await expect(service.beforeUpload(tenant, ['kb-a'], 200)).rejects.toMatchObject({
      details: { quota: 'bytes', limit: 1000, used: 900, knowledgeBaseId: 'kb-a' },
    });
    await expect(service.beforeUpload(tenant, ['default'], 200)).resolves.toBeUndefined();
  });

  it('keeps the deployment\u2019s limit as a ceiling: a tenant admin can only tighten it', async () => {
    const { service } = setup({
      ...none,
      QUOTA_MAX_DOCUMENTS: 100,
      QUOTA_MAX_SEARCHES_PER_DAY: 50,
    });
    expect((await service.quotas(tenant)).tenant).toMatchObject({
      maxDocuments: 100,
      maxSearchesPerDay: 50,
    });
    await service.setQuotas(tenant, admin, { maxDocuments: 1000, maxSearchesPerDay: 5 });
    expect((await service.quotas(tenant)).tenant).toMatchObject({
      maxDocuments: 100,
      maxSearchesPerDay: 5,
    });
    // Fields left out are kept; null removes the tenant's own limit.
    await service.setQuotas(tenant, admin, { maxSearchesPerDay: null });
    expect((await service.quotas(tenant)).tenant).toMatchObject({
      maxDocuments: 100,
      maxSearchesPerDay: 50,
    });
  });

  it('refuses a knowledge base past the tenant\u2019s count', async () => {
    const { service } = setup({ ...none, QUOTA_MAX_KNOWLEDGE_BASES: 3 }, {}, 3);
    await expect(service.beforeKnowledgeBase(tenant)).rejects.toMatchObject({
      details: { quota: 'knowledgeBases', limit: 3, used: 3 },
    });
  });

  it('lets only tenant admins set quotas or read usage, and any member read the limits', async () => {
    const { service } = setup();
    await expect(service.setQuotas(tenant, member, { maxDocuments: 1 })).rejects.toMatchObject({
      code: 'permission_denied',
    });
    await expect(service.usage(tenant, member, {})).rejects.toMatchObject({
      code: 'permission_denied',
    });
    await expect(service.quotas(tenant)).resolves.toBeDefined();
    await expect(
      service.setQuotas(tenant, admin, { knowledgeBaseId: 'nope', maxDocuments: 1 }),
    ).rejects.toMatchObject({ code: 'knowledge_base_not_found' });
  });
});
