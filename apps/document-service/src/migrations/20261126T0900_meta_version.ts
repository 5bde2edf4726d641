import { type Kysely, type Migration, sql } from 'kysely';

/**
 * A document's meta version (docs/adr/0018): moved on with each ACL, attribute or membership
 * change in that change's transaction and carried by its event, so indexing can ignore a stale
 * one. `reconciliation_runs` lets one replica at a time run a periodic pass.
 */
export const metaVersion: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('documents')
      .addColumn('meta_version', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`CREATE TABLE reconciliation_runs (
      name text PRIMARY KEY,
      ran_at timestamptz NOT NULL
    )`.execute(db);
  },
};
