import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Usage counted by day and quotas set by tenant admins (docs/adr/0053). `knowledge_base_id` is ''
 * for the tenant as a whole: a day's searches over no particular knowledge base, the tenant's
 * own limits.
 */
export const usageAndQuotas: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE TABLE usage_daily (
      tenant_id text NOT NULL,
      knowledge_base_id text NOT NULL DEFAULT '',
      day date NOT NULL,
      searches bigint NOT NULL DEFAULT 0,
      context_calls bigint NOT NULL DEFAULT 0,
      reranks bigint NOT NULL DEFAULT 0,
      uploads bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, day, knowledge_base_id))`.execute(db);
    await sql`CREATE TABLE quotas (
      tenant_id text NOT NULL,
      knowledge_base_id text NOT NULL DEFAULT '',
      max_documents bigint,
      max_bytes bigint,
      max_knowledge_bases bigint,
      max_searches_per_day bigint,
      updated_at timestamptz NOT NULL,
      updated_by text NOT NULL,
      PRIMARY KEY (tenant_id, knowledge_base_id))`.execute(db);
  },
};
