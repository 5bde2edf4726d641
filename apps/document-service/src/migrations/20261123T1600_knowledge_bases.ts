import { type Kysely, type Migration, sql } from 'kysely';

/** Knowledge bases: a name and description to edit, and a pipeline fixed at creation. */
export const knowledgeBases: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE knowledge_bases (
        tenant_id text NOT NULL,
        id text NOT NULL,
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        chunker jsonb NOT NULL,
        embedding_model text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, id)
      )`.execute(db);
    await sql`CREATE INDEX documents_knowledge_bases ON documents USING gin (knowledge_base_ids)`.execute(
      db,
    );
  },
};
