import { type Kysely, type Migration, sql } from 'kysely';

/**
 * casbin's rule table, in the layout casbin-pg-adapter reads and writes. Created here rather than
 * by the adapter's own migrations, which keep their bookkeeping in the `public` schema.
 */
export const createCasbinRules: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE IF NOT EXISTS casbin (
        id serial PRIMARY KEY,
        ptype text NOT NULL,
        rule jsonb NOT NULL UNIQUE
      )`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS casbin_ptype ON casbin (ptype)`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS casbin_rule_domain ON casbin ((rule->>1), (rule->>2))`.execute(
      db,
    );
  },
};
