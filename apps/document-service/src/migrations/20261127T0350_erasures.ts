import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Erasure jobs (docs/adr/0052): a tenant admin's request to delete everything a user uploaded
 * or everything a listing filter matches, with its progress. Kept after it ends, as its record.
 */
export const erasures: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE TABLE erasures (
      tenant_id text NOT NULL,
      id uuid NOT NULL,
      requested_by text NOT NULL,
      owner_id text,
      where_filter text,
      status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'succeeded', 'failed')),
      deleted integer NOT NULL DEFAULT 0,
      held integer NOT NULL DEFAULT 0,
      error text,
      started_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      finished_at timestamptz,
      PRIMARY KEY (tenant_id, id)
    )`.execute(db);
  },
};
