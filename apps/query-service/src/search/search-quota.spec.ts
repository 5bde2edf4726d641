import type { Caller } from '@kb/auth';
import { toTenantId } from '@kb/contracts';

import type { SearchCache } from '../cache/search.cache';
import { SearchQuota } from './search-quota';

const tenant = toTenantId('t1');
const caller = { tenantId: tenant, userId: 'u', token: 'x' } as unknown as Caller;
const noon = new Date('2026-11-27T12:00:00Z');

function setup(quotas: {
  tenant: number | null;
  knowledgeBases?: Array<{ id: string; maxSearchesPerDay: number | null }>;
}) {
  const counts = new Map<string, number>();
  const counters = {
    increment: jest.fn(async (key: string) => {
      counts.set(key, (counts.get(key) ?? 0) + 1);
      return Promise.resolve(counts.get(key));
    }),
  } as unknown as SearchCache;
  const documents = {
    quotas: jest.fn(async () =>
      Promise.resolve({
        tenant: {
          maxDocuments: null,
          maxBytes: null,
          maxKnowledgeBases: null,
          maxSearchesPerDay: quotas.tenant,
        },
        knowledgeBases: (quotas.knowledgeBases ?? []).map((kb) => ({
          ...kb,
          maxDocuments: null,
          maxBytes: null,
          maxKnowledgeBases: null,
        })),
      }),
    ),
  };
  return { quota: new SearchQuota(documents, counters), counters, documents };
}

describe('SearchQuota', () => {
  it('admits a tenant\u2019s searches up to its daily limit, then answers 429 until midnight', async () => {
    const { quota, documents } = setup({ tenant: 2 });
    await quota.admit(tenant, [], caller, noon);
    await quota.admit(tenant, [], caller, noon);
    const refused = await quota.admit(tenant, [], caller, noon).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      code: 'quota_exceeded',
      kind: 'resource_exhausted',
      retryAfterSeconds: 12 * 3600,
      details: { quota: 'searchesPerDay', limit: 2, used: 2 },
    });
    // The limits were read once and kept.
    expect(documents.quotas).toHaveBeenCalledTimes(1);
    // A new day starts a new count.
    await expect(
      quota.admit(tenant, [], caller, new Date('2026-11-28T00:00:01Z')),
    ).resolves.toBeUndefined();
  });

  it('counts a knowledge base with a limit only when a search names it', async () => {
    const { quota } = setup({ tenant: null, knowledgeBases: [{ id: 'a', maxSearchesPerDay: 1 }] });
    await quota.admit(tenant, ['a'], caller, noon);
    await quota.admit(tenant, ['b'], caller, noon);
    await expect(quota.admit(tenant, ['a', 'b'], caller, noon)).rejects.toMatchObject({
      details: { quota: 'searchesPerDay', limit: 1, knowledgeBaseId: 'a' },
    });
  });

  it('costs no counter when no limit is set, and admits when the limits cannot be read', async () => {
    const { quota, counters } = setup({ tenant: null });
    await quota.admit(tenant, ['a'], caller, noon);
    expect(counters.increment).not.toHaveBeenCalled();
    const quotas = jest.fn(async () => Promise.reject(new Error('document-service down')));
    const failing = new SearchQuota({ quotas }, counters);
    await expect(failing.admit(tenant, [], caller, noon)).resolves.toBeUndefined();
    // Not asked again for every search while it is away.
    await expect(failing.admit(tenant, [], caller, noon)).resolves.toBeUndefined();
    expect(quotas).toHaveBeenCalledTimes(1);
  });
});
