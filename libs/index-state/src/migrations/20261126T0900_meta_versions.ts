import { type Kysely, type Migration, sql } from 'kysely';

/**
 * The meta version (docs/adr/0018) of the ACL and attributes recorded for a document, so a stale
 * event is ignored, and the ACL version both indexes have taken (`applied_version`), which access
 * reconciliation compares with document-service's. Rows written before count as applied.
 */
export const metaVersions: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE document_principals
      ADD COLUMN version integer NOT NULL DEFAULT 0,
      ADD COLUMN applied_version integer NOT NULL DEFAULT 0`.execute(db);
    await sql`ALTER TABLE document_attributes
      ADD COLUMN version integer NOT NULL DEFAULT 0`.execute(db);
  },
};
