import { type Kysely, type Migration, sql } from 'kysely';

/**
 * The ended-grant job (docs/adr/0054) looks for documents whose ACL has ends (`acl.until`): few
 * rows, found through this partial index instead of reading the table every tick.
 */
export const aclEndingIndex: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE INDEX documents_acl_ending ON documents (tenant_id) WHERE acl ? 'until'`.execute(
      db,
    );
  },
};
