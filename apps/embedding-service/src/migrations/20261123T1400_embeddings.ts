import { type Kysely, type Migration, sql } from 'kysely';

/** Vectors by (model, SHA-256 of the chunk text), shared by every tenant, document and version. */
export const embeddings: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE embeddings (
        model text NOT NULL,
        sha256 text NOT NULL,
        vector bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (model, sha256)
      )`.execute(db);
  },
};
