import { type Kysely, type Migration, sql } from 'kysely';

/** Document attributes on every vector, so filters and knowledge-base scopes apply inside search. */
export const kbVectorsAttributes = (table: string): Migration => ({
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      ALTER TABLE ${sql.table(table)}
        ADD COLUMN IF NOT EXISTS kb_ids text[] NOT NULL DEFAULT '{}',
        ADD COLUMN IF NOT EXISTS tags text[] NOT NULL DEFAULT '{}',
        ADD COLUMN IF NOT EXISTS uploaded_at bigint NOT NULL DEFAULT 0,
        ADD COLUMN IF NOT EXISTS metadata jsonb NOT NULL DEFAULT '{}'`.execute(db);
  },
});
