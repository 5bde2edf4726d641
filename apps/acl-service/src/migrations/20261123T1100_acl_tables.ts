import { type Kysely, type Migration, sql } from 'kysely';

/** The policy version per tenant and the audit log. */
export const createAclTables: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE policy_versions (tenant_id text PRIMARY KEY, version bigint NOT NULL)`.execute(
      db,
    );
    await sql`
      CREATE TABLE audit_log (
        id bigserial PRIMARY KEY,
        tenant_id text NOT NULL,
        at timestamptz NOT NULL,
        actor text NOT NULL,
        action text NOT NULL,
        detail text NOT NULL DEFAULT '',
        document_ids text[] NOT NULL DEFAULT '{}',
        chunks text[] NOT NULL DEFAULT '{}'
      )`.execute(db);
    await sql`CREATE INDEX audit_log_actor ON audit_log (tenant_id, actor, at)`.execute(db);
    await sql`CREATE INDEX audit_log_time ON audit_log (tenant_id, at)`.execute(db);
    await sql`CREATE INDEX audit_log_documents ON audit_log USING gin (document_ids)`.execute(db);
  },
};
