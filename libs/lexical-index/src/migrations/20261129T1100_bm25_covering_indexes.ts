import { type Kysely, type Migration, sql } from 'kysely';

/**
 * BM25 reads from indexes alone (docs/adr/0029): the postings' primary key carries `tf` and
 * `doc_len` (INCLUDE), so the postings of a query's terms are an index-only scan instead of one
 * heap page per posting (a chunk's postings were written together, a term's are scattered), and
 * the chunks a caller may read, with their lengths, are found in `chunks_readable` instead of in
 * the wide chunk rows (text, tsvector). Index-only once vacuum has marked the pages all-visible
 * (autovacuum does after inserts); before that, the heap is read as it was.
 */
export const bm25CoveringIndexes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE UNIQUE INDEX postings_pkey_covering
      ON postings (tenant_id, lexeme, document_id, document_version, chunk_index)
      INCLUDE (tf, doc_len)`.execute(db);
    // The new index becomes the primary key (and takes its name); the old one is dropped with it.
    await sql`ALTER TABLE postings DROP CONSTRAINT postings_pkey,
      ADD CONSTRAINT postings_pkey PRIMARY KEY USING INDEX postings_pkey_covering`.execute(db);
    await sql`CREATE INDEX chunks_readable ON chunks (tenant_id)
      INCLUDE (document_id, document_version, chunk_index, doc_len, principals)`.execute(db);
  },
};
