import { type Kysely, type Migration, sql } from 'kysely';

/** Document attributes on every chunk, so filters and knowledge-base scopes apply inside BM25. */
export const attributes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      ALTER TABLE chunks
        ADD COLUMN kb_ids text[] NOT NULL DEFAULT '{}',
        ADD COLUMN tags text[] NOT NULL DEFAULT '{}',
        ADD COLUMN uploaded_at bigint NOT NULL DEFAULT 0,
        ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'`.execute(db);
  },
};
