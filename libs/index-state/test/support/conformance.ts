import { randomUUID } from 'node:crypto';

import { pipelineSpace, type TenantId, tenantSpace, toTenantId } from '@kb/contracts';
import { leaseQueueConformance } from '@kb/jobs/test/support/lease-queue.conformance';

import type { DocumentIndexState, IndexGenerations } from '../../src';

/** A tenant no other test of the run uses, so backends may share one schema across tests. */
const newTenant = (): TenantId => toTenantId(`t-${randomUUID().slice(0, 8)}`);
const sorted = <T>(values: Iterable<T>): T[] => [...values].sort();

/** The behaviour every IndexGenerations backend must share; each backend's test file runs it. */
export function indexGenerationsConformance(getGenerations: () => IndexGenerations): void {
  it("counts each tenant's generations on their own, from 0", async () => {
    const generations = getGenerations();
    const [a, b] = [newTenant(), newTenant()];
    expect(await generations.current(a)).toBe(0);
    expect(await generations.bump(a)).toBe(1);
    expect(await generations.bump(a)).toBe(2);
    expect(await generations.current(a)).toBe(2);
    expect(await generations.current(b)).toBe(0);
    expect(await generations.bump(b)).toBe(1);
    expect(await generations.current(a)).toBe(2);
  });

  it('lists the tenants that ever bumped', async () => {
    const generations = getGenerations();
    const [a, b, never] = [newTenant(), newTenant(), newTenant()];
    await generations.bump(b);
    await generations.bump(a);
    const tenants = await generations.tenants();
    expect(tenants).toEqual(expect.arrayContaining([a, b]));
    expect(tenants).not.toContain(never);
    expect(new Set(tenants).size).toBe(tenants.length);
  });
}

/** The behaviour every DocumentIndexState backend must share; each backend's test file runs it. */
export function documentIndexStateConformance(getState: () => DocumentIndexState): void {
  it('tombstones a document of one tenant, idempotently', async () => {
    const state = getState();
    const [tenant, other, doc] = [newTenant(), newTenant(), randomUUID()];
    expect(await state.isTombstoned(tenant, doc)).toBe(false);
    await state.tombstone(tenant, doc);
    await state.tombstone(tenant, doc);
    expect(await state.isTombstoned(tenant, doc)).toBe(true);
    expect(await state.isTombstoned(other, doc)).toBe(false);
  });

  it('claims a space for the newest version only; a replay claims again', async () => {
    const state = getState();
    const tenant = newTenant();
    const [own, pipeline, doc] = [
      tenantSpace(tenant),
      pipelineSpace(tenant, 'abc123'),
      randomUUID(),
    ];
    expect(await state.claimVersion(own, doc, 2)).toBe(true);
    expect(await state.claimVersion(own, doc, 2)).toBe(true);
    expect(await state.claimVersion(own, doc, 1)).toBe(false);
    expect(await state.claimVersion(pipeline, doc, 1)).toBe(true);
    expect(await state.claimVersion(own, doc, 3)).toBe(true);
    expect(await state.claimVersion(own, doc, 2)).toBe(false);
  });

  it("tells what a space should hold: the claimed version, and the tenant's tombstones", async () => {
    const state = getState();
    const tenant = newTenant();
    const [own, pipeline] = [tenantSpace(tenant), pipelineSpace(tenant, 'abc123')];
    const [claimed, deleted, unknown] = [randomUUID(), randomUUID(), randomUUID()];
    await state.claimVersion(own, claimed, 4);
    await state.claimVersion(own, deleted, 1);
    await state.tombstone(tenant, deleted);
    expect(await state.indexStates(own, [claimed, deleted, unknown])).toEqual(
      new Map([
        [claimed, { version: 4, deleted: false }],
        [deleted, { version: 1, deleted: true }],
      ]),
    );
    // A pipeline's space has claims of its own, and sees the tenant's tombstones.
    expect(await state.indexStates(pipeline, [claimed, deleted, unknown])).toEqual(
      new Map([[deleted, { deleted: true }]]),
    );
  });

  it('records the spaces holding a version, never letting an older version replace a newer', async () => {
    const state = getState();
    const tenant = newTenant();
    const [own, a, b, doc] = [
      tenantSpace(tenant),
      pipelineSpace(tenant, 'aaa'),
      pipelineSpace(tenant, 'bbb'),
      randomUUID(),
    ];
    expect(await state.spacesOf(tenant, doc)).toEqual([own]);
    expect(await state.recordSpace(tenant, doc, a, 2, 5)).toEqual(new Map([[a, 5]]));
    expect(await state.recordSpace(tenant, doc, b, 2, 7)).toEqual(
      new Map([
        [a, 5],
        [b, 7],
      ]),
    );
    // v1 arrives late in `a`: the entry of v2 stays, and v1 is held nowhere else.
    expect(await state.recordSpace(tenant, doc, a, 1, 9)).toEqual(
      new Map([
        [a, 5],
        [b, 7],
      ]),
    );
    expect(await state.recordSpace(tenant, doc, a, 3, 6)).toEqual(new Map([[a, 6]]));
    expect(sorted(await state.spacesOf(tenant, doc))).toEqual(sorted([own, a, b]));
    expect(await state.allSpaces()).toEqual(expect.arrayContaining([a, b]));

    await state.forgetSpace(tenant, doc, a);
    await state.forgetSpace(tenant, doc, a);
    expect(sorted(await state.spacesOf(tenant, doc))).toEqual(sorted([own, b]));
    await state.forgetSpace(tenant, doc, b);
    expect(await state.spacesOf(tenant, doc)).toEqual([own]);
    const all = await state.allSpaces();
    expect(all).not.toContain(a);
    expect(new Set(all).size).toBe(all.length);
  });

  it('keeps spaces apart per document and per tenant', async () => {
    const state = getState();
    const [tenant, other] = [newTenant(), newTenant()];
    const [space, doc, sibling] = [pipelineSpace(tenant, 'ccc'), randomUUID(), randomUUID()];
    await state.recordSpace(tenant, doc, space, 1, 3);
    expect(await state.spacesOf(tenant, sibling)).toEqual([tenantSpace(tenant)]);
    expect(await state.spacesOf(other, doc)).toEqual([tenantSpace(other)]);
  });

  it("answers which spaces serve knowledge bases; unknown ones are looked for in the tenant's own", async () => {
    const state = getState();
    const tenant = newTenant();
    const [own, pipeline] = [tenantSpace(tenant), pipelineSpace(tenant, 'ddd')];
    const bySpace = (entries: Array<{ space: string; model: string | undefined }>) =>
      [...entries].sort((x, y) => x.space.localeCompare(y.space));
    expect(await state.knowledgeBaseSpaces(tenant, [])).toEqual([{ space: own, model: undefined }]);
    await state.recordKnowledgeBaseSpace(tenant, [], pipeline, 'ignored');
    await state.recordKnowledgeBaseSpace(tenant, ['kb1', 'kb2'], pipeline, 'm1');
    await state.recordKnowledgeBaseSpace(tenant, ['kb3'], own, 'default-model');
    expect(await state.knowledgeBaseSpaces(tenant, ['kb1'])).toEqual([
      { space: pipeline, model: 'm1' },
    ]);
    expect(await state.knowledgeBaseSpaces(tenant, ['kb1', 'kb2'])).toEqual([
      { space: pipeline, model: 'm1' },
    ]);
    // The tenant's own space is searched with the default model, whatever was recorded.
    expect(await state.knowledgeBaseSpaces(tenant, ['kb3'])).toEqual([
      { space: own, model: undefined },
    ]);
    expect(bySpace(await state.knowledgeBaseSpaces(tenant, ['kb1', 'new']))).toEqual(
      bySpace([
        { space: own, model: undefined },
        { space: pipeline, model: 'm1' },
      ]),
    );
    expect(bySpace(await state.knowledgeBaseSpaces(tenant, []))).toEqual(
      bySpace([
        { space: own, model: undefined },
        { space: pipeline, model: 'm1' },
      ]),
    );
    // A knowledge base whose pipeline changed is searched in its new space.
    await state.recordKnowledgeBaseSpace(tenant, ['kb2'], own, 'default-model');
    expect(await state.knowledgeBaseSpaces(tenant, ['kb2'])).toEqual([
      { space: own, model: undefined },
    ]);
    expect(await state.knowledgeBaseSpaces(newTenant(), ['kb1'])).toHaveLength(1);
  });

  it('remembers the latest ACL and attributes of a document, per tenant', async () => {
    const state = getState();
    const [tenant, other, doc] = [newTenant(), newTenant(), randomUUID()];
    expect(await state.principalsOf(tenant, doc)).toBeUndefined();
    expect(await state.attributesOf(tenant, doc)).toBeUndefined();
    await state.recordPrincipals(tenant, doc, ['u:ann']);
    await state.recordPrincipals(tenant, doc, ['u:bob', 'g:eng']);
    const edited = {
      knowledgeBaseIds: ['kb1'],
      tags: ['x'],
      metadata: { year: 2024, draft: true },
    };
    await state.recordAttributes(tenant, doc, { knowledgeBaseIds: [], tags: [], metadata: {} });
    await state.recordAttributes(tenant, doc, edited);
    expect(await state.principalsOf(tenant, doc)).toEqual(['u:bob', 'g:eng']);
    expect(await state.attributesOf(tenant, doc)).toEqual(edited);
    expect(await state.principalsOf(other, doc)).toBeUndefined();
    expect(await state.attributesOf(other, doc)).toBeUndefined();
  });

  it('ignores a stale ACL or attribute version, records a replay, and tells what was applied', async () => {
    const state = getState();
    const [tenant, doc, untouched] = [newTenant(), randomUUID(), randomUUID()];
    expect(await state.recordPrincipals(tenant, doc, ['u:ann'], 2)).toBe(true);
    expect(await state.accessStates(tenant, [doc, untouched])).toEqual(
      new Map([[doc, { principals: ['u:ann'], version: 2, applied: false }]]),
    );
    await state.markPrincipalsApplied(tenant, doc, 2);
    // v1 was published late by another outbox replica: it must not win.
    expect(await state.recordPrincipals(tenant, doc, ['u:ann', 't:*'], 1)).toBe(false);
    expect(await state.principalsOf(tenant, doc)).toEqual(['u:ann']);
    expect(await state.accessStates(tenant, [doc])).toEqual(
      new Map([[doc, { principals: ['u:ann'], version: 2, applied: true }]]),
    );
    expect(await state.recordPrincipals(tenant, doc, ['u:ann'], 2)).toBe(true);
    expect(await state.recordPrincipals(tenant, doc, ['u:bob'], 4)).toBe(true);
    // Applying v2 late does not mark v4 applied.
    await state.markPrincipalsApplied(tenant, doc, 2);
    expect((await state.accessStates(tenant, [doc])).get(doc)).toEqual({
      principals: ['u:bob'],
      version: 4,
      applied: false,
    });
    // An event from before versions is applied as the newest, keeping the version.
    expect(await state.recordPrincipals(tenant, doc, ['u:cy'])).toBe(true);
    await state.markPrincipalsApplied(tenant, doc);
    expect((await state.accessStates(tenant, [doc])).get(doc)).toEqual({
      principals: ['u:cy'],
      version: 4,
      applied: true,
    });

    const edited = { knowledgeBaseIds: ['kb1'], tags: ['new'], metadata: {} };
    expect(await state.recordAttributes(tenant, doc, edited, 3)).toBe(true);
    expect(await state.recordAttributes(tenant, doc, { ...edited, tags: ['old'] }, 2)).toBe(false);
    expect(await state.attributesOf(tenant, doc)).toEqual(edited);
  });

  it('reserves a space before its first chunks: listed, but holding no version', async () => {
    const state = getState();
    const tenant = newTenant();
    const [own, pipeline, doc] = [tenantSpace(tenant), pipelineSpace(tenant, 'eee'), randomUUID()];
    await state.reserveSpace(tenant, doc, pipeline);
    expect(sorted(await state.spacesOf(tenant, doc))).toEqual(sorted([own, pipeline]));
    expect(await state.recordSpace(tenant, doc, own, 1, 3)).toEqual(new Map([[own, 3]]));
    expect(await state.recordSpace(tenant, doc, pipeline, 1, 4)).toEqual(
      new Map([
        [own, 3],
        [pipeline, 4],
      ]),
    );
    // Reserving a space that holds a version changes nothing.
    await state.reserveSpace(tenant, doc, pipeline);
    expect(await state.recordSpace(tenant, doc, own, 1, 3)).toEqual(
      new Map([
        [own, 3],
        [pipeline, 4],
      ]),
    );
  });

  it('forgets a deleted document but its tombstone, in its spaces only', async () => {
    const state = getState();
    const [tenant, doc, kept] = [newTenant(), randomUUID(), randomUUID()];
    const pipeline = pipelineSpace(tenant, '0123456789ab');
    for (const id of [doc, kept]) {
      await state.tombstone(tenant, id);
      await state.claimVersion(pipeline, id, 2);
      await state.recordSpace(tenant, id, pipeline, 2, 3);
      await state.recordPrincipals(tenant, id, ['u:ann']);
      await state.recordAttributes(tenant, id, { knowledgeBaseIds: [], tags: ['x'], metadata: {} });
    }
    await state.forgetDocument(tenant, doc, await state.spacesOf(tenant, doc));
    await state.forgetDocument(tenant, doc, [tenantSpace(tenant), pipeline]); // a replay
    expect(await state.principalsOf(tenant, doc)).toBeUndefined();
    expect(await state.attributesOf(tenant, doc)).toBeUndefined();
    expect(await state.spacesOf(tenant, doc)).toEqual([tenantSpace(tenant)]);
    expect(await state.indexStates(pipeline, [doc, kept])).toEqual(
      new Map([
        [doc, { deleted: true }],
        [kept, { version: 2, deleted: true }],
      ]),
    );
    expect(await state.isTombstoned(tenant, doc)).toBe(true);
    expect(await state.principalsOf(tenant, kept)).toEqual(['u:ann']);
    expect(await state.spacesOf(tenant, kept)).toEqual([tenantSpace(tenant), pipeline]);
  });

  it('tombstones, finds the spaces of and forgets many documents at once (emptying, ADR 24)', async () => {
    const state = getState();
    const [tenant, other] = [newTenant(), newTenant()];
    const [a, b, c, kept] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const [p1, p2] = [pipelineSpace(tenant, '0123456789ab'), pipelineSpace(tenant, 'ba9876543210')];
    for (const id of [a, b, c, kept]) {
      await state.claimVersion(p1, id, 1);
      await state.recordSpace(tenant, id, p1, 1, 2);
      await state.recordPrincipals(tenant, id, ['u:ann']);
    }
    await state.recordSpace(tenant, b, p2, 1, 2);
    await state.recordAttributes(tenant, a, { knowledgeBaseIds: ['kb'], tags: [], metadata: {} });
    await state.tombstone(tenant, a); // a single delete got there first
    await state.tombstoneMany(tenant, [a, b, c]);
    await state.tombstoneMany(tenant, [a, b, c]); // a redelivery
    await state.tombstoneMany(tenant, []);
    for (const id of [a, b, c]) expect(await state.isTombstoned(tenant, id)).toBe(true);
    expect(await state.isTombstoned(tenant, kept)).toBe(false);
    expect(await state.isTombstoned(other, a)).toBe(false);

    const spaces = await state.spacesOfMany(tenant, [a, b, c]);
    expect(sorted(spaces.keys())).toEqual(sorted([tenantSpace(tenant), p1, p2]));
    expect(sorted(spaces.get(tenantSpace(tenant))!)).toEqual(sorted([a, b, c]));
    expect(sorted(spaces.get(p1)!)).toEqual(sorted([a, b, c]));
    expect(spaces.get(p2)).toEqual([b]);
    expect(await state.spacesOfMany(tenant, [])).toEqual(new Map());

    await state.forgetDocuments(tenant, [a, b, c], [...spaces.keys()]);
    await state.forgetDocuments(tenant, [a, b, c], [...spaces.keys()]); // a redelivery
    for (const id of [a, b, c]) {
      expect(await state.spacesOf(tenant, id)).toEqual([tenantSpace(tenant)]);
      expect(await state.principalsOf(tenant, id)).toBeUndefined();
    }
    expect(await state.attributesOf(tenant, a)).toBeUndefined();
    expect(await state.indexStates(p1, [a, kept])).toEqual(
      new Map([
        [a, { deleted: true }],
        [kept, { version: 1, deleted: false }],
      ]),
    );
    expect(await state.spacesOf(tenant, kept)).toEqual([tenantSpace(tenant), p1]);
    expect(await state.principalsOf(tenant, kept)).toEqual(['u:ann']);
  });

  it('queues derived cleanups, leases each to one claimer, and takes them back when done', async () => {
    const state = getState();
    const tenant = newTenant();
    const [a, b] = [randomUUID(), randomUUID()];
    await state.queueDerivedCleanup(tenant, [a, b]);
    await state.queueDerivedCleanup(tenant, [a]); // a redelivery
    const mine = (claimed: Array<{ tenantId: TenantId; documentId: string }>) =>
      sorted(claimed.filter((c) => c.tenantId === tenant).map((c) => c.documentId));
    // Other tests' tenants may be queued too: claim generously, look at this tenant's.
    expect(mine(await state.claimDerivedCleanup(10_000, 60_000))).toEqual(sorted([a, b]));
    // Leased: a second claimer gets neither.
    expect(mine(await state.claimDerivedCleanup(10_000, 60_000))).toEqual([]);
    await state.derivedCleanupDone(tenant, [a]);
    // A lease that runs out (its claimer died) gives the row back; b's is still running.
    const c = randomUUID();
    await state.queueDerivedCleanup(tenant, [c]);
    expect(mine(await state.claimDerivedCleanup(10_000, 1))).toEqual([c]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(mine(await state.claimDerivedCleanup(10_000, 60_000))).toEqual([c]);
    await state.derivedCleanupDone(tenant, [b, c]);
    await state.derivedCleanupDone(tenant, []);
    expect(mine(await state.claimDerivedCleanup(10_000, 1))).toEqual([]);
  });

  describe('derived clean-ups as a lease queue', () => {
    leaseQueueConformance<{ tenantId: TenantId; documentId: string }>(async () => {
      const state = getState();
      // Emptied: whatever earlier tests left due is settled.
      for (const left of await state.claimDerivedCleanup(100_000, 60_000)) {
        await state.derivedCleanupDone(left.tenantId, [left.documentId]);
      }
      const tenant = newTenant();
      return {
        queue: { claim: (limit, leaseMs) => state.claimDerivedCleanup(limit, leaseMs) },
        add: async (count) => {
          const ids = Array.from({ length: count }, () => randomUUID());
          await state.queueDerivedCleanup(tenant, ids);
          return ids;
        },
        idOf: (job) => job.documentId,
        finish: (job) => state.derivedCleanupDone(job.tenantId, [job.documentId]),
        // Leases end by the database's clock (or the process's): the test waits.
        elapse: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      };
    });
  });
}
