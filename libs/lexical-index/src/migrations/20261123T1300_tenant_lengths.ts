import { type Kysely, type Migration, sql } from 'kysely';

/** BM25's per-tenant statistics (chunk count, mean length) from an index-only scan. */
export const tenantLengths: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE INDEX chunks_tenant_len ON chunks (tenant_id) INCLUDE (doc_len)`.execute(db);
  },
};
