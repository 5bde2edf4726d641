import { type Kysely, type Migration, sql } from 'kysely';

export const createChunks: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE chunks (
        tenant_id text NOT NULL,
        document_id text NOT NULL,
        document_version integer NOT NULL,
        chunk_index integer NOT NULL,
        title text NOT NULL,
        text text NOT NULL,
        start_offset integer NOT NULL,
        end_offset integer NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('english', title), 'B') || setweight(to_tsvector('english', text), 'A')
        ) STORED,
        PRIMARY KEY (tenant_id, document_id, document_version, chunk_index)
      )`.execute(db);
    await sql`CREATE INDEX chunks_tsv ON chunks USING gin (tsv)`.execute(db);
  },
};
