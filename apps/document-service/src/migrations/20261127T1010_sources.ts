import { type Kysely, type Migration, sql } from 'kysely';

/** Sources that sync (an S3 bucket and prefix) into a knowledge base, and their syncs (ADR 26). */
export const sources: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE TABLE sources (
      id uuid PRIMARY KEY,
      tenant_id text NOT NULL,
      name text NOT NULL,
      kind text NOT NULL,
      knowledge_base_id text NOT NULL,
      bucket text,
      prefix text NOT NULL DEFAULT '',
      include text[] NOT NULL DEFAULT '{}',
      exclude text[] NOT NULL DEFAULT '{}',
      created_by text NOT NULL,
      created_at timestamptz NOT NULL
    )`.execute(db);
    await sql`CREATE INDEX sources_tenant ON sources (tenant_id, created_at)`.execute(db);
    await sql`CREATE TABLE source_syncs (
      id uuid PRIMARY KEY,
      tenant_id text NOT NULL,
      source_id uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
      status text NOT NULL,
      added integer NOT NULL DEFAULT 0,
      updated integer NOT NULL DEFAULT 0,
      unchanged integer NOT NULL DEFAULT 0,
      deleted integer NOT NULL DEFAULT 0,
      failed integer NOT NULL DEFAULT 0,
      failures jsonb NOT NULL DEFAULT '[]',
      started_at timestamptz NOT NULL,
      finished_at timestamptz
    )`.execute(db);
    await sql`CREATE INDEX source_syncs_source ON source_syncs (source_id, started_at DESC)`.execute(
      db,
    );
  },
};
