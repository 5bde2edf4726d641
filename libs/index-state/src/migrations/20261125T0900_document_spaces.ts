import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Which index spaces (one per pipeline, docs/adr/0012) hold a document, at which version and with
 * how many chunks: deletes and ACL changes reach every space, and a version counts as indexed
 * once every space of its pipelines holds it.
 */
export const documentSpaces: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE document_spaces (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        space text NOT NULL,
        version integer NOT NULL,
        chunk_count integer NOT NULL,
        PRIMARY KEY (tenant_id, document_id, space)
      )`.execute(db);
    // Where a knowledge base's chunks are, and which model embedded them: what a search reads.
    await sql`
      CREATE TABLE knowledge_base_spaces (
        tenant_id text NOT NULL,
        knowledge_base_id text NOT NULL,
        space text NOT NULL,
        model text NOT NULL,
        PRIMARY KEY (tenant_id, knowledge_base_id)
      )`.execute(db);
  },
};
