import { type Kysely, type Migration, sql } from 'kysely';

/**
 * One running sync per source: a partial unique index refuses a second, and a heartbeat that the
 * running process renews tells a sync abandoned by a crashed process (which may then be replaced)
 * from one still at work. Syncs left running by an earlier version are closed as abandoned.
 */
export const oneRunningSync: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE source_syncs ADD COLUMN heartbeat_at timestamptz`.execute(db);
    await sql`
      UPDATE source_syncs
         SET status = 'failed', finished_at = now(),
             failures = '[{"path":"/","reason":"sync_abandoned"}]'::jsonb
       WHERE status = 'running'`.execute(db);
    await sql`
      CREATE UNIQUE INDEX source_syncs_one_running ON source_syncs (source_id)
       WHERE status = 'running'`.execute(db);
  },
};
