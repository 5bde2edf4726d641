import { type Kysely, type Migration, sql } from 'kysely';

/** The latest editable attributes of documents edited after upload (like `document_principals`). */
export const documentAttributes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE document_attributes (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        attributes jsonb NOT NULL,
        PRIMARY KEY (tenant_id, document_id)
      )`.execute(db);
  },
};
