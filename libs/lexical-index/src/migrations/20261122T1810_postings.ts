import { type Kysely, type Migration, sql } from 'kysely';

/**
 * An inverted index for BM25: one row per (chunk, term) with the term frequency and the chunk
 * length, kept in step with `chunks` by a trigger, read by (tenant, term). Scoring then touches
 * only the postings of the query's terms instead of every matching chunk's whole tsvector.
 */
export const postings: Migration = {
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
