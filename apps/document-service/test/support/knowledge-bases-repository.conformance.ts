import { randomUUID } from 'node:crypto';

import { DEFAULT_CHUNKER, type TenantId, toTenantId } from '@kb/contracts';

import type {
  KnowledgeBasesRepository,
  NewKnowledgeBase,
} from '../../src/knowledge-bases/knowledge-bases.repository';
import type { TransactionRunner } from '../../src/platform/transaction.runner';

/** What the suite drives: the repository, and the runner its `trx` methods take part in. */
export interface KnowledgeBasesConformanceHarness {
  repository: KnowledgeBasesRepository;
  transactions: TransactionRunner;
}

const newKnowledgeBase = (
  id: string,
  overrides: Partial<NewKnowledgeBase> = {},
): NewKnowledgeBase => ({
  id,
  name: id.toUpperCase(),
  description: '',
  chunker: DEFAULT_CHUNKER,
  embeddingModel: 'all-MiniLM-L6-v2',
  embeddingDimension: 384,
  tagRule: [],
  metadata: {},
  allowPrecomputedVectors: false,
  contextRerank: false,
  pii: 'off',
  now: new Date('2026-11-22T10:00:00Z'),
  ...overrides,
});

/**
 * What `SqlKnowledgeBasesRepository` (test/knowledge-bases.repository.int-spec.ts, Postgres) and
 * `InMemoryKnowledgeBasesRepository` (unit tier) share: identity per tenant, order and pages by
 * id, the name filter, partial updates and the reads the documents side asks for.
 */
export function knowledgeBasesRepositoryConformance(
  harness: () => KnowledgeBasesConformanceHarness,
): void {
  let h: KnowledgeBasesConformanceHarness;
  let tenant: TenantId;
  const insert = (id: string, overrides: Partial<NewKnowledgeBase> = {}) =>
    h.transactions.run((trx) => h.repository.insert(trx, tenant, newKnowledgeBase(id, overrides)));

  beforeEach(() => {
    h = harness();
    tenant = toTenantId(`kb-${randomUUID().slice(0, 8)}`);
  });

  it('keeps one knowledge base per id and tenant', async () => {
    expect(await insert('handbook')).toMatchObject({
      id: 'handbook',
      name: 'HANDBOOK',
      tagRule: { anyOf: [] },
      createdAt: '2026-11-22T10:00:00.000Z',
    });
    expect(await insert('handbook')).toBeUndefined();
    expect(await h.repository.find(tenant, 'handbook')).toMatchObject({ id: 'handbook' });
    expect(await h.repository.find(toTenantId(`${tenant}-other`), 'handbook')).toBeUndefined();
    expect(await h.repository.existingIds(tenant, ['handbook', 'nope'])).toEqual(['handbook']);
  });

  it('lists and pages by id, filtering by a case-insensitive part of name or id', async () => {
    for (const id of ['b-2', 'a_1', 'c', 'a1', 'ab', 'a-c']) await insert(id);
    const all = (await h.repository.list(tenant)).map((kb) => kb.id);
    // By id, in byte order: ids are lower-case ASCII, and the local database collates as C.
    expect(all).toEqual(['a-c', 'a1', 'a_1', 'ab', 'b-2', 'c']);
    const paged: string[] = [];
    let afterId: string | undefined;
    for (;;) {
      const { items, total } = await h.repository.page(tenant, { limit: 4, afterId });
      expect(total).toBe(6);
      paged.push(...items.map((kb) => kb.id));
      if (items.length < 4) break;
      afterId = items[items.length - 1]!.id;
    }
    expect(paged).toEqual(all);
    expect(
      (await h.repository.page(tenant, { limit: 2, offset: 4 })).items.map((kb) => kb.id),
    ).toEqual(all.slice(4));
    // `_` is a character here, not LIKE's any-character.
    expect(await h.repository.page(tenant, { limit: 10, name: 'A_' })).toMatchObject({
      items: [{ id: 'a_1' }],
      total: 1,
    });
    expect((await h.repository.page(tenant, { limit: 10, name: 'b' })).total).toBe(2);
  });

  it('updates only what a change names, merging or replacing metadata', async () => {
    await insert('kb', { metadata: { team: 'x', keep: 1 }, tagRule: ['a'] });
    const update = (change: Parameters<KnowledgeBasesRepository['update']>[3]) =>
      h.transactions.run((trx) =>
        h.repository.update(trx, tenant, 'kb', change, new Date('2026-11-23T10:00:00Z')),
      );
    expect(
      await update({
        description: 'd',
        metadata: { values: { team: null, more: true }, merge: true },
      }),
    ).toMatchObject({
      name: 'KB',
      description: 'd',
      tagRule: { anyOf: ['a'] },
      metadata: { keep: 1, more: true },
      updatedAt: '2026-11-23T10:00:00.000Z',
    });
    expect(
      (await update({ metadata: { values: { only: 'this' }, merge: false } }))?.metadata,
    ).toEqual({
      only: 'this',
    });
    expect(await update({ allowPrecomputedVectors: true })).toMatchObject({
      allowPrecomputedVectors: true,
      contextRerank: false,
      metadata: { only: 'this' },
    });
    expect(await update({ contextRerank: true })).toMatchObject({
      allowPrecomputedVectors: true,
      contextRerank: true,
      pii: 'off',
    });
    expect(await update({ pii: 'redact' })).toMatchObject({ contextRerank: true, pii: 'redact' });
    expect(
      await h.transactions.run((trx) => h.repository.update(trx, tenant, 'gone', {}, new Date())),
    ).toBeUndefined();
  });

  it('answers tag rules and pipelines by id, and deletes', async () => {
    await insert('b', { tagRule: ['x', 'y'] });
    await insert('a', { tagRule: ['z'] });
    await insert('none');
    const token = { strategy: 'token', size: 256, overlap: 32 } as const;
    await insert('token', { chunker: token, pii: 'block' });
    expect(await h.transactions.run((trx) => h.repository.tagRulesOf(trx, tenant))).toEqual([
      { knowledgeBaseId: 'a', anyOf: ['z'] },
      { knowledgeBaseId: 'b', anyOf: ['x', 'y'] },
    ]);
    expect(
      await h.transactions.run((trx) =>
        h.repository.pipelineSettingsOf(trx, tenant, ['token', 'none', 'nope']),
      ),
    ).toEqual([
      {
        knowledgeBaseId: 'none',
        chunker: DEFAULT_CHUNKER,
        embeddingModel: 'all-MiniLM-L6-v2',
        pii: 'off',
      },
      {
        knowledgeBaseId: 'token',
        chunker: token,
        embeddingModel: 'all-MiniLM-L6-v2',
        pii: 'block',
      },
    ]);
    expect(await h.transactions.run((trx) => h.repository.delete(trx, tenant, 'a'))).toBe(true);
    expect(await h.transactions.run((trx) => h.repository.delete(trx, tenant, 'a'))).toBe(false);
    expect(await h.repository.hasDocuments(tenant, 'b')).toBe(false);
  });
}
