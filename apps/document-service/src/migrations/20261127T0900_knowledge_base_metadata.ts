import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Knowledge bases as collections (docs/adr/0024): a free-form `metadata` map, and an index that
 * finds a knowledge base's documents without scanning the tenant's (stats, emptying, listing).
 */
export const knowledgeBaseMetadata: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE knowledge_bases ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb`.execute(
      db,
    );
    await sql`CREATE INDEX documents_knowledge_base_ids ON documents USING gin (knowledge_base_ids)`.execute(
      db,
    );
  },
};
