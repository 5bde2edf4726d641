import { type Kysely, type Migration, sql } from 'kysely';

/**
 * The relay takes document and collection events before audit records (a burst of searches
 * writes thousands of those; new documents' events must not wait behind them). Order stays
 * insertion order within each lane; this index serves the claim's ORDER BY without a sort.
 */
export const outboxLanes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE INDEX outbox_lanes ON outbox ((topic = 'kb.audit.v1'), id)`.execute(db);
  },
};
