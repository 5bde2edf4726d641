import { sql, type Kysely, type Migration } from 'kysely';
import type { Migrations } from '@kb/database';

/**
 * Schema of the lexical index in the suite's Postgres; indexing-service applies its migrations,
 * in one history with those of `@kb/index-state`, whose tables share the schema.
 */
export const LEXICAL_SCHEMA = 'search_index';

const createChunks: Migration = {
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

/**
 * BM25 needs each chunk's length in tokens. One trigger now computes the tsvector and that length
 * from the same expression (a generated column cannot hold the length: it needs a subquery).
 */
const bm25Lengths: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE chunks DROP COLUMN tsv`.execute(db);
    await sql`ALTER TABLE chunks ADD COLUMN tsv tsvector NOT NULL DEFAULT ''::tsvector`.execute(db);
    await sql`ALTER TABLE chunks ADD COLUMN doc_len integer NOT NULL DEFAULT 0`.execute(db);
    await sql`
      CREATE FUNCTION chunks_index_text() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.tsv := to_tsvector('english', NEW.title || E'\n' || NEW.text);
        NEW.doc_len := coalesce((SELECT sum(array_length(positions, 1)) FROM unnest(NEW.tsv)), 0);
        RETURN NEW;
      END $$`.execute(db);
    await sql`
      CREATE TRIGGER chunks_index_text BEFORE INSERT OR UPDATE OF title, text ON chunks
      FOR EACH ROW EXECUTE FUNCTION chunks_index_text()`.execute(db);
    await sql`UPDATE chunks SET text = text`.execute(db);
    await sql`CREATE INDEX chunks_tsv ON chunks USING gin (tsv)`.execute(db);
  },
};

/**
 * An inverted index for BM25: one row per (chunk, term) with the term frequency and the chunk
 * length, kept in step with `chunks` by a trigger, read by (tenant, term). Scoring then touches
 * only the postings of the query's terms instead of every matching chunk's whole tsvector.
 */
const postings: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE postings (
        tenant_id text NOT NULL,
        lexeme text NOT NULL,
        document_id text NOT NULL,
        document_version integer NOT NULL,
        chunk_index integer NOT NULL,
        tf integer NOT NULL,
        doc_len integer NOT NULL,
        PRIMARY KEY (tenant_id, lexeme, document_id, document_version, chunk_index),
        FOREIGN KEY (tenant_id, document_id, document_version, chunk_index)
          REFERENCES chunks (tenant_id, document_id, document_version, chunk_index) ON DELETE CASCADE
      )`.execute(db);
    await sql`CREATE INDEX postings_chunk ON postings (tenant_id, document_id, document_version, chunk_index)`.execute(
      db,
    );
    await sql`
      CREATE FUNCTION chunks_postings() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM postings p WHERE p.tenant_id = NEW.tenant_id AND p.document_id = NEW.document_id
          AND p.document_version = NEW.document_version AND p.chunk_index = NEW.chunk_index;
        INSERT INTO postings (tenant_id, lexeme, document_id, document_version, chunk_index, tf, doc_len)
          SELECT NEW.tenant_id, u.lexeme, NEW.document_id, NEW.document_version, NEW.chunk_index,
                 coalesce(array_length(u.positions, 1), 1), NEW.doc_len
            FROM unnest(NEW.tsv) AS u;
        RETURN NULL;
      END $$`.execute(db);
    await sql`
      CREATE TRIGGER chunks_postings AFTER INSERT OR UPDATE OF title, text ON chunks
      FOR EACH ROW EXECUTE FUNCTION chunks_postings()`.execute(db);
    await sql`UPDATE chunks SET text = text`.execute(db);
    await sql`ANALYZE postings`.execute(db);
  },
};

/** Document attributes on every chunk, so filters and knowledge-base scopes apply inside BM25. */
const attributes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      ALTER TABLE chunks
        ADD COLUMN kb_ids text[] NOT NULL DEFAULT '{}',
        ADD COLUMN tags text[] NOT NULL DEFAULT '{}',
        ADD COLUMN uploaded_at bigint NOT NULL DEFAULT 0,
        ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'`.execute(db);
  },
};

/** Who may read each chunk's document: searches keep chunks sharing a principal with the caller. */
const principals: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE chunks ADD COLUMN principals text[] NOT NULL DEFAULT '{}'`.execute(db);
  },
};

/** BM25's per-tenant statistics (chunk count, mean length) from an index-only scan. */
const tenantLengths: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE INDEX chunks_tenant_len ON chunks (tenant_id) INCLUDE (doc_len)`.execute(db);
  },
};

/**
 * Dropped again: with a new tenant's rows not yet analyzed, the planner took this tenant-only index
 * for the chunk lookup instead of the primary key and scanned the tenant's chunks once per hit
 * (1.6 s instead of 15 ms, measured right after a bulk ingest).
 */
const dropTenantLengths: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`DROP INDEX IF EXISTS chunks_tenant_len`.execute(db);
  },
};

export const lexicalIndexMigrations: Migrations = {
  '20261122T1700_create_chunks': createChunks,
  '20261122T1800_bm25_lengths': bm25Lengths,
  '20261122T1810_postings': postings,
  '20261123T0900_attributes': attributes,
  '20261123T1000_principals': principals,
  '20261123T1300_tenant_lengths': tenantLengths,
  '20261123T1310_drop_tenant_lengths': dropTenantLengths,
};
