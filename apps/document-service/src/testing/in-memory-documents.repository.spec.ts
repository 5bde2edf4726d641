import { documentsRepositoryConformance } from '../../test/support/documents-repository.conformance';
import { documentServiceFixture } from './document-service.fixture';

/** The fake passes the suite `SqlDocumentsRepository` passes against Postgres. */
describe('InMemoryDocumentsRepository', () => {
  documentsRepositoryConformance(() => {
    const f = documentServiceFixture();
    return {
      service: f,
      outbox: async () => f.db.outbox.map(({ topic, key, payload }) => ({ topic, key, payload })),
    };
  });
});
