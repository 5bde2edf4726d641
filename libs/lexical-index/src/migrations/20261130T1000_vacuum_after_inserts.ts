import { type Kysely, type Migration, sql } from 'kysely';

/**
 * BM25 reads the postings and the readable chunks index-only (docs/adr/0029), which holds only
 * for pages vacuum has marked all-visible. By default inserts trigger autovacuum after 20 % of a
 * table: with 1.5 million postings, a knowledge base ingested since the last vacuum did a heap
 * fetch per posting and chunk (about 4,000 for a CISI query) and took twice as long, for as long
 * as other tenants' inserts took to cross that line. So these two tables are vacuumed after a
 * fixed number of inserts instead; vacuum then only visits the pages written since.
 */
export const vacuumAfterInserts: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE postings SET (autovacuum_vacuum_insert_scale_factor = 0,
      autovacuum_vacuum_insert_threshold = 20000)`.execute(db);
    await sql`ALTER TABLE chunks SET (autovacuum_vacuum_insert_scale_factor = 0,
      autovacuum_vacuum_insert_threshold = 1000)`.execute(db);
  },
};
