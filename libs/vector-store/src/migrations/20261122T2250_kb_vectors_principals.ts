import { type Kysely, type Migration, sql } from 'kysely';

/** Who may read each vector's document: searches keep vectors sharing a principal with the caller. */
export const kbVectorsPrincipals = (table: string): Migration => ({
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      ALTER TABLE ${sql.table(table)}
        ADD COLUMN IF NOT EXISTS principals text[] NOT NULL DEFAULT '{}'`.execute(db);
  },
});
