import { type Kysely, type Migration, sql } from 'kysely';

/**
 * A full access pass resumes where it stopped (docs/adr/0018): `resume_after` is the last document
 * id it sent (the nil UUID before the first page; null once it finished), `progressed_at` when it
 * last sent a page. A replica takes over a pass that made no progress for an interval.
 */
export const resumablePasses: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE reconciliation_runs
      ADD COLUMN resume_after uuid,
      ADD COLUMN progressed_at timestamptz`.execute(db);
  },
};
