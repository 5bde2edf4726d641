import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Legal holds and retention (docs/adr/0052). `legal_holds` is the holds' own register: a hold is
 * never deleted, only released (who, when, why), so the table is also their audit trail beside the
 * `kb.audit.v1` records. A hold covers a knowledge base, a list of document ids or a listing filter
 * (`where_filter`, the JSON of `GET /v1/documents?where=`, parsed again where it is applied).
 * Retention: a knowledge base's `retention_days` counted from upload or last update, and a
 * document's own `expires_at`; the partial index finds the documents that expire.
 */
export const legalHoldsAndRetention: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE TABLE legal_holds (
      tenant_id text NOT NULL,
      id uuid NOT NULL,
      name text NOT NULL,
      reason text NOT NULL DEFAULT '',
      scope text NOT NULL CHECK (scope IN ('knowledge_base', 'documents', 'filter')),
      knowledge_base_id text,
      document_ids uuid[] NOT NULL DEFAULT '{}',
      where_filter text,
      placed_by text NOT NULL,
      placed_at timestamptz NOT NULL,
      released_by text,
      released_at timestamptz,
      release_reason text,
      PRIMARY KEY (tenant_id, id)
    )`.execute(db);
    await sql`CREATE INDEX legal_holds_active ON legal_holds (tenant_id) WHERE released_at IS NULL`.execute(
      db,
    );
    await sql`ALTER TABLE knowledge_bases
      ADD COLUMN retention_days integer CHECK (retention_days > 0),
      ADD COLUMN retention_from text NOT NULL DEFAULT 'uploaded'
        CHECK (retention_from IN ('uploaded', 'updated'))`.execute(db);
    await sql`ALTER TABLE documents ADD COLUMN expires_at timestamptz`.execute(db);
    await sql`CREATE INDEX documents_expiring ON documents (expires_at) WHERE expires_at IS NOT NULL`.execute(
      db,
    );
  },
};
