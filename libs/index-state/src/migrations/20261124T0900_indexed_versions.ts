import { type Kysely, type Migration, sql } from 'kysely';

/**
 * The newest version of each document the indexes hold: a late event of an older version (a
 * replay, a re-drive) must not replace a newer one.
 */
export const indexedVersions: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE indexed_versions (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        version integer NOT NULL,
        PRIMARY KEY (tenant_id, document_id)
      )`.execute(db);
  },
};
