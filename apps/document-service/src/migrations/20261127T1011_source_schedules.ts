import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Scheduled syncs (docs/adr/0043): a source may carry a cron `schedule` (and the IANA time zone
 * it is read in); `next_sync_at` is when it is next due, claimed by one replica's scheduler
 * (`FOR UPDATE SKIP LOCKED`). Each sync records what started it.
 * Written on 2026-11-27 at 01:20 UTC but named to sort right after `20261127T1010_sources`, which
 * creates both tables under a name dated ahead (ADR 38): a new database applies migrations in
 * name order, and this one must find the tables.
 */
export const sourceSchedules: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE sources
      ADD COLUMN schedule text,
      ADD COLUMN schedule_timezone text,
      ADD COLUMN next_sync_at timestamptz`.execute(db);
    await sql`CREATE INDEX sources_due ON sources (next_sync_at) WHERE next_sync_at IS NOT NULL`.execute(
      db,
    );
    await sql`ALTER TABLE source_syncs
      ADD COLUMN trigger text NOT NULL DEFAULT 'manual'`.execute(db);
  },
};
