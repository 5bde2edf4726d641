import { type Kysely, type Migration, sql } from 'kysely';

/**
 * PII at ingest (docs/adr/0051): a knowledge base's setting (`off`, existing knowledge bases
 * included), and what the parser found in a document's current version, counted by type (null:
 * nothing looked for yet).
 */
export const pii: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE knowledge_bases
      ADD COLUMN pii text NOT NULL DEFAULT 'off'
        CHECK (pii IN ('off', 'detect', 'redact', 'block'))`.execute(db);
    await sql`ALTER TABLE documents ADD COLUMN pii_findings jsonb`.execute(db);
  },
};
