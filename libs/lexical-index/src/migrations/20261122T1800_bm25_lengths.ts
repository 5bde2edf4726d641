import { type Kysely, type Migration, sql } from 'kysely';

/**
 * BM25 needs each chunk's length in tokens. One trigger now computes the tsvector and that length
 * from the same expression (a generated column cannot hold the length: it needs a subquery).
 */
export const bm25Lengths: Migration = {
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
