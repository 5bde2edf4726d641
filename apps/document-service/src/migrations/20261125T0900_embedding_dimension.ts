import { type Kysely, type Migration, sql } from 'kysely';

/**
 * The dimension of a knowledge base's embedding model, detected when it is created (asked of
 * embedding-service). Knowledge bases created before it have none recorded.
 */
export const embeddingDimension: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE knowledge_bases ADD COLUMN embedding_dimension integer`.execute(db);
  },
};
