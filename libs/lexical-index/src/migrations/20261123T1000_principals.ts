import { type Kysely, type Migration, sql } from 'kysely';

/** Who may read each chunk's document: searches keep chunks sharing a principal with the caller. */
export const principals: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE chunks ADD COLUMN principals text[] NOT NULL DEFAULT '{}'`.execute(db);
  },
};
