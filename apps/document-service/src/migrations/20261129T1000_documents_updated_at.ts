import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Access reconciliation's passes send the documents changed since the last one (docs/adr/0018):
 * without this index each of their pages read every row of the table (a million at 500×CISI).
 */
export const documentsUpdatedAt: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE INDEX documents_updated_at ON documents (updated_at)`.execute(db);
  },
};
