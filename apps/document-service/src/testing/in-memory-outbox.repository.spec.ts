import { outboxRepositoryConformance } from '../../test/support/outbox-repository.conformance';
import { InMemoryDatabase } from './in-memory.database';
import { InMemoryOutboxRepository } from './in-memory-outbox.repository';
import { InMemoryTransactionRunner } from './in-memory-transaction.runner';

/** The fake passes the suite `SqlOutboxRepository` passes against Postgres. */
describe('InMemoryOutboxRepository', () => {
  outboxRepositoryConformance(() => {
    const db = new InMemoryDatabase();
    return {
      outbox: new InMemoryOutboxRepository(db),
      transactions: new InMemoryTransactionRunner(db),
    };
  });
});
