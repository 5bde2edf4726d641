import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Fresh statistics for a knowledge base just ingested. Until `chunks` is analyzed after its
 * rows arrive, the planner believes the tenant has a couple of readable chunks and joins the
 * postings by one index lookup per chunk: 108–131 ms for a CISI query on a database of many
 * tenants, against 15 ms with the hash join it picks once it knows the tenant (docs/adr/0029).
 * By default `chunks` is analyzed after changes to 10 % of its rows (4,400 of 44,000 here, more
 * than a CISI-sized knowledge base writes), so both tables are analyzed after a fixed number of
 * changes instead.
 */
export const analyzeAfterWrites: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE postings SET (autovacuum_analyze_scale_factor = 0,
      autovacuum_analyze_threshold = 20000)`.execute(db);
    await sql`ALTER TABLE chunks SET (autovacuum_analyze_scale_factor = 0,
      autovacuum_analyze_threshold = 1000)`.execute(db);
  },
};
