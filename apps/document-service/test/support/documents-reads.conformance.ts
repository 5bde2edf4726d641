import { randomUUID } from 'node:crypto';

import { toTenantId } from '@kb/contracts';

import type { NewDocument } from '../../src/documents/document.model';
import { newAccess } from '../../src/testing/document-service.fixture';
import {
  type DocumentsConformanceHarness,
  insertWithEvent as insert,
  newDocument,
  tenant,
} from './documents-conformance.support';

/** The `documents_listed` audit records of a tenant, in the order written. */
async function listedRecords(h: DocumentsConformanceHarness, tenantId: string) {
  return (await h.outbox()).filter((m) => {
    const envelope = JSON.parse(m.payload) as { tenantId: string; payload: { action?: string } };
    return (
      m.topic === 'kb.audit.v1' &&
      envelope.tenantId === tenantId &&
      envelope.payload.action === 'documents_listed'
    );
  });
}

/** The reads of `DocumentsRepository`: tenant scope, pages by time and by external-id prefix. */
export function documentReadsConformance(harness: () => DocumentsConformanceHarness): void {
  let h: DocumentsConformanceHarness;
  const insertWithEvent = (doc: NewDocument) => insert(h, doc);
  beforeEach(() => {
    h = harness();
  });

  it('scopes reads to the tenant', async () => {
    const doc = newDocument();
    await insertWithEvent(doc);
    const repository = h.service.documentsRepository;
    expect(await repository.findById(toTenantId('t2'), doc.id, 'all')).toBeUndefined();
    expect(await repository.findById(tenant, doc.id, 'all')).toBeDefined();
  });

  it('pages through a tenant’s documents newest first', async () => {
    const other = toTenantId(`page-${randomUUID().slice(0, 8)}`);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const doc = newDocument({ tenantId: other, now: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) });
      ids.push(doc.id);
      await insertWithEvent(doc);
    }
    const repository = h.service.documentsRepository;
    const first = await repository.list(other, 3, 'all');
    const last = first[first.length - 1]!;
    const second = await repository.list(other, 3, 'all', {
      createdAt: last.createdAt.toISOString(),
      id: last.id,
    });
    expect([...first, ...second].map((d) => d.id)).toEqual([...ids].reverse());
  });

  it('pages an external-id prefix in byte order, escaping LIKE, only what the caller reads (N6)', async () => {
    const other = toTenantId(`prefix-${randomUUID().slice(0, 8)}`);
    // Byte order, whatever the database's collation: 'B' < 'a' < 'b' < 'é'.
    const names = ['b', 'a', 'é', 'B', 'a_b', 'a%'];
    for (const name of names) {
      await insertWithEvent(newDocument({ tenantId: other, externalId: `src/${name}` }));
    }
    // Not under the prefix: another prefix, and a `_` that LIKE would take as any character.
    await insertWithEvent(newDocument({ tenantId: other, externalId: 'srcX/a' }));
    await insertWithEvent(
      newDocument({
        tenantId: other,
        externalId: 'src/hidden',
        acl: { users: [], groups: [], roles: [], tenant: false },
        ownerId: 'zoe',
      }),
    );
    const repository = h.service.documentsRepository;
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await repository.pageByExternalIdPrefix(other, 'src/', ['g:eng'], 2, after);
      seen.push(...page.map((d) => d.externalId!));
      if (page.length < 2) break;
      after = page[page.length - 1]!.externalId!;
    }
    const expected = names
      .map((n) => `src/${n}`)
      .sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(seen).toEqual(expected);
    expect(await repository.pageByExternalIdPrefix(other, 'src/a_', 'all', 10)).toHaveLength(1);
    // The sync's own method still lists them all at once.
    expect(await repository.listByExternalIdPrefix(other, 'src/', 'all')).toHaveLength(7);
    // Through the service: the cursor round-trips, and a page of many is audited with its ids.
    const alice = newAccess({ tenantId: other, userId: 'alice', principals: ['g:eng'] });
    const first = await h.service.reads.listByExternalIdPrefix(other, alice, 'src/', 4);
    const second = await h.service.reads.listByExternalIdPrefix(
      other,
      alice,
      'src/',
      4,
      first.nextCursor!,
    );
    expect([...first.items, ...second.items].map((d) => d.externalId)).toEqual(expected);
    expect(second.nextCursor).toBeNull();
    const rows = await listedRecords(h, other);
    expect(rows.map((r) => JSON.parse(r.payload).payload.documentIds)).toEqual([
      first.items.map((d) => d.id),
      second.items.map((d) => d.id),
    ]);
  });
}
