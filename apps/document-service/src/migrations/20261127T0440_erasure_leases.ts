import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Erasures are a lease queue (docs/adr/0049, 0052): a running job is held by one replica until
 * its lease ends, so a job whose replica stopped or crashed is taken up again by another.
 */
export const erasureLeases: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE erasures ADD COLUMN leased_until timestamptz`.execute(db);
    await sql`CREATE INDEX erasures_running ON erasures (started_at) WHERE status = 'running'`.execute(
      db,
    );
  },
};
