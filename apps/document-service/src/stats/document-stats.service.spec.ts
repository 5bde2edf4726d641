import {
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from '../testing/document-service.fixture';
import { InMemoryDocumentStatsRepository } from '../testing/in-memory-document-stats.repository';
import { DocumentStatsService } from './document-stats.service';

const files = spool();
afterAll(() => files.cleanup());

describe('DocumentStatsService', () => {
  it('counts documents and chunks by status per knowledge base, only what the caller may read', async () => {
    const f = documentServiceFixture();
    const alice = newAccess({ userId: 'alice' });
    const bob = newAccess({ userId: 'bob' });
    await f.knowledgeBases.create(TENANT, alice, {
      id: 'handbook',
      name: 'Handbook',
      description: '',
      tagRule: { anyOf: [] },
    });
    await f.knowledgeBases.create(TENANT, alice, {
      id: 'empty',
      name: 'Empty',
      description: '',
      tagRule: { anyOf: [] },
    });
    const shared = await f.documents.upload(TENANT, alice, files.file('one'), {
      knowledgeBaseIds: ['default', 'handbook'],
      acl: { users: ['bob'], groups: [], roles: [], tenant: false },
    });
    await f.documents.upload(TENANT, alice, files.file('two'), { knowledgeBaseIds: ['handbook'] });
    await f.documents.applyStatus(
      TENANT,
      { documentId: shared.id, version: 1, status: 'indexed', chunkCount: 3 },
      new Date(),
    );
    const service = new DocumentStatsService(
      new InMemoryDocumentStatsRepository(f.db),
      f.knowledgeBasesRepository,
      f.audit,
    );

    const ofAlice = await service.stats(TENANT, alice);
    expect(ofAlice.scope).toBe('readable');
    expect(ofAlice.totals).toMatchObject({ documents: 2, chunks: 3 });
    expect(ofAlice.totals.byStatus.indexed).toEqual({ documents: 1, chunks: 3 });
    expect(ofAlice.totals.byStatus.pending).toEqual({ documents: 1, chunks: 0 });
    const handbook = ofAlice.knowledgeBases.find((kb) => kb.id === 'handbook');
    expect(handbook).toMatchObject({ name: 'Handbook', documents: 2, chunks: 3 });
    expect(ofAlice.knowledgeBases.map((kb) => kb.id)).toEqual(['default', 'empty', 'handbook']);
    expect(ofAlice.knowledgeBases.find((kb) => kb.id === 'empty')).toMatchObject({
      documents: 0,
      chunks: 0,
    });

    // bob reads only the shared document: the other one is in no count of his.
    const ofBob = await service.stats(TENANT, bob);
    expect(ofBob.totals).toMatchObject({ documents: 1, chunks: 3 });
    expect(ofBob.knowledgeBases.find((kb) => kb.id === 'handbook')).toMatchObject({
      documents: 1,
    });
    const ofAdmin = await service.stats(TENANT, newAccess({ userId: 'root', isAdmin: true }));
    expect(ofAdmin).toMatchObject({ scope: 'all', totals: { documents: 2 } });
  });
});
