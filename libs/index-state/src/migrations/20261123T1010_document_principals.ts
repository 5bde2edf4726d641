import { type Kysely, type Migration, sql } from 'kysely';

/**
 * The latest ACL of each document whose ACL changed, so a version indexed after the change (its
 * embeddings were in flight) gets the new principals, not those of its upload.
 */
export const documentPrincipals: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE document_principals (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        principals text[] NOT NULL,
        PRIMARY KEY (tenant_id, document_id)
      )`.execute(db);
  },
};
