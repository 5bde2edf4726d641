import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Documents removed in bulk whose parsed chunks and embeddings in S3 are still to be deleted
 * (docs/adr/0024): S3 finds a document's objects by listing its prefix, one call per document,
 * which a batch of 1,000 cannot wait for on its partition. Rows go once the objects are gone;
 * `claimed_until` leases a row to one replica for a while, so a crashed one's rows come back.
 */
export const derivedCleanup: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE derived_cleanup (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        queued_at timestamptz NOT NULL DEFAULT now(),
        claimed_until timestamptz,
        PRIMARY KEY (tenant_id, document_id)
      )`.execute(db);
  },
};
