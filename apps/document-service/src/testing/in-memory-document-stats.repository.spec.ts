import { documentStatsConformance } from '../../test/support/document-stats.conformance';
import { documentServiceFixture } from './document-service.fixture';
import { InMemoryDocumentStatsRepository } from './in-memory-document-stats.repository';

/** The fake passes the suite `SqlDocumentStatsRepository` passes against Postgres. */
describe('InMemoryDocumentStatsRepository', () => {
  documentStatsConformance(() => {
    const f = documentServiceFixture();
    return { documents: f.documents, stats: new InMemoryDocumentStatsRepository(f.db) };
  });
});
