import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Tag rules: a knowledge base can take in every document carrying one of its rule's tags. A
 * document's membership (`knowledge_base_ids`) is then the knowledge bases named for it
 * (`explicit_knowledge_base_ids`) plus those whose rule matches its tags.
 */
export const tagRules: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE knowledge_bases ADD COLUMN tag_rule text[] NOT NULL DEFAULT '{}'`.execute(
      db,
    );
    await sql`ALTER TABLE documents ADD COLUMN explicit_knowledge_base_ids text[]`.execute(db);
    await sql`UPDATE documents SET explicit_knowledge_base_ids = knowledge_base_ids`.execute(db);
    await sql`ALTER TABLE documents
      ALTER COLUMN explicit_knowledge_base_ids SET NOT NULL,
      ALTER COLUMN explicit_knowledge_base_ids SET DEFAULT '{default}'`.execute(db);
    await sql`CREATE INDEX documents_tags ON documents USING gin (tags)`.execute(db);
  },
};
