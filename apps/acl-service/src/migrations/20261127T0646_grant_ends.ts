import { type Kysely, type Migration, sql } from 'kysely';

/**
 * When a grouping rule (`member → role, group or grant principal`) ends (ADR 54). The casbin rule
 * itself is unchanged; a rule with a row here is honoured only until `expires_at`.
 */
export const createGrantEnds: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE grant_ends (
        tenant_id text NOT NULL,
        member text NOT NULL,
        target text NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, member, target)
      )`.execute(db);
    await sql`CREATE INDEX grant_ends_due ON grant_ends (expires_at)`.execute(db);
  },
};
