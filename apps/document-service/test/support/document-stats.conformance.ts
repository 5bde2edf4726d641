import { randomUUID } from 'node:crypto';

import { type TenantId, toTenantId } from '@kb/contracts';

import type { NewDocument } from '../../src/documents/document.model';
import type { DocumentsService } from '../../src/documents/documents.service';
import type { DocumentStatsRepository } from '../../src/stats/document-stats.repository';

/** What the suite drives: documents written through the service, counted by the repository. */
export interface DocumentStatsConformanceHarness {
  documents: DocumentsService;
  stats: DocumentStatsRepository;
}

/**
 * The grouped counts `SqlDocumentStatsRepository` (test/document-stats.int-spec.ts, Postgres) and
 * `InMemoryDocumentStatsRepository` (unit tier) share: per knowledge base and status, per status,
 * and the distinct metadata values, within what a caller may read.
 */
export function documentStatsConformance(harness: () => DocumentStatsConformanceHarness): void {
  it('counts documents and chunks per knowledge base and status, only visible ones', async () => {
    const { documents, stats } = harness();
    // A tenant of its own: the suite may share a database with other tests.
    const tenant = toTenantId(`stats-${randomUUID().slice(0, 8)}`);
    const add = async (
      owner: string,
      knowledgeBaseIds: string[],
      metadata: NewDocument['metadata'] = {},
      tenantId: TenantId = tenant,
    ) => {
      const sha256 = randomUUID().replace(/-/g, '').padEnd(64, '0');
      const doc: NewDocument = {
        id: randomUUID(),
        tenantId,
        title: 't',
        filename: 'a.md',
        contentType: 'text/markdown',
        sizeBytes: 1,
        sha256,
        blobKey: `blobs/${tenantId}/sha256/${sha256}`,
        tags: owner === 'alice' ? ['mine'] : [],
        knowledgeBaseIds,
        ownerId: owner,
        acl: { users: [], groups: [], roles: [], tenant: false },
        metadata,
        now: new Date('2026-11-22T10:00:00Z'),
      };
      return (await documents.register(doc, [])).document.id;
    };
    const indexed = await add('alice', ['default', 'handbook'], { team: 'x' });
    await add('alice', ['handbook'], { team: ['y', 'x'] });
    await add('bob', ['handbook'], { team: 'z' });
    await add('alice', ['default'], {}, toTenantId(`${tenant}-other`));
    await documents.applyStatus(
      tenant,
      { documentId: indexed, version: 1, status: 'indexed', chunkCount: 7 },
      new Date(),
    );

    expect(await stats.countByKnowledgeBase(tenant, ['u:alice'])).toEqual([
      { knowledgeBaseId: 'default', status: 'indexed', documents: 1, chunks: 7 },
      { knowledgeBaseId: 'handbook', status: 'indexed', documents: 1, chunks: 7 },
      { knowledgeBaseId: 'handbook', status: 'pending', documents: 1, chunks: 0 },
    ]);
    expect(await stats.countByStatus(tenant, ['u:alice'])).toEqual([
      { status: 'indexed', documents: 1, chunks: 7 },
      { status: 'pending', documents: 1, chunks: 0 },
    ]);
    expect(await stats.countByStatus(tenant, 'all')).toEqual([
      { status: 'indexed', documents: 1, chunks: 7 },
      { status: 'pending', documents: 2, chunks: 0 },
    ]);
    expect(await stats.countByStatus(tenant, ['u:mallory'])).toEqual([]);
    const inHandbook = await stats.countInKnowledgeBases(tenant, 'all', ['handbook', 'none']);
    expect(
      inHandbook.map(({ knowledgeBaseId, status, documents: n }) => [knowledgeBaseId, status, n]),
    ).toEqual([
      ['handbook', 'indexed', 1],
      ['handbook', 'pending', 2],
    ]);
    // Each element of a list counts; only what the caller reads; the first `limit`, sorted.
    expect(
      await stats.valuesOf(tenant, ['u:alice'], 'handbook', { kind: 'metadata', key: 'team' }, 5),
    ).toEqual([
      { value: 'x', count: 2 },
      { value: 'y', count: 1 },
    ]);
    expect(
      await stats.valuesOf(tenant, 'all', 'handbook', { kind: 'metadata', key: 'team' }, 2),
    ).toEqual([
      { value: 'x', count: 2 },
      { value: 'y', count: 1 },
    ]);
    expect(await stats.valuesOf(tenant, 'all', 'handbook', { kind: 'tags' }, 5)).toEqual([
      { value: 'mine', count: 2 },
    ]);
  });
}
