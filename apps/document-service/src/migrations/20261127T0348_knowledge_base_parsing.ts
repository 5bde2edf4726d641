import { type Kysely, type Migration, sql } from 'kysely';

/**
 * How a knowledge base's documents are read (docs/adr/0050): OCR, its languages, spreadsheet
 * table mode, as set at creation. NULL, existing knowledge bases included: the defaults.
 */
export const knowledgeBaseParsing: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE knowledge_bases ADD COLUMN parsing jsonb`.execute(db);
  },
};
