import { knowledgeBasesRepositoryConformance } from '../../test/support/knowledge-bases-repository.conformance';
import { InMemoryDatabase } from './in-memory.database';
import { InMemoryKnowledgeBasesRepository } from './in-memory-knowledge-bases.repository';
import { InMemoryTransactionRunner } from './in-memory-transaction.runner';

/** The fake passes the suite `SqlKnowledgeBasesRepository` passes against Postgres. */
describe('InMemoryKnowledgeBasesRepository', () => {
  knowledgeBasesRepositoryConformance(() => {
    const db = new InMemoryDatabase();
    return {
      repository: new InMemoryKnowledgeBasesRepository(db),
      transactions: new InMemoryTransactionRunner(db),
    };
  });
});
