import type { Migrations } from '@kb/database';
import { sql, type Kysely, type Migration } from 'kysely';

/** The policy version per tenant and the audit log. */
const createAclTables: Migration = {
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

/**
 * casbin's rule table, in the layout casbin-pg-adapter reads and writes. Created here rather than
 * by the adapter's own migrations, which keep their bookkeeping in the `public` schema.
 */
const createCasbinRules: Migration = {
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

export const migrations: Migrations = {
  '20261123T1100_acl_tables': createAclTables,
  '20261123T1110_casbin_rules': createCasbinRules,
};

export const ACL_SCHEMA = 'acl_service';
