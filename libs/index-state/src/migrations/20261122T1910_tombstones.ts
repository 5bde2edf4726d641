import { type Kysely, type Migration, sql } from 'kysely';

/** Deleted documents, so a late `chunks embedded` event cannot bring one back into the index. */
export const tombstones: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE tombstones (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        deleted_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, document_id)
      )`.execute(db);
  },
};
