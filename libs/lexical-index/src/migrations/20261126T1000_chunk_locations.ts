import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Where each chunk sits in its document, for search hits: the page it starts on (paged formats)
 * and the Markdown headings in force there. Rows indexed before this stay without them (NULL and
 * empty) until their document is indexed again.
 */
export const chunkLocations: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE chunks ADD COLUMN page integer, ADD COLUMN heading_path text[] NOT NULL DEFAULT '{}'`.execute(
      db,
    );
  },
};
