import { type Kysely, type Migration, sql } from 'kysely';

/**
 * A client's own id for a document (`external_id`, unique per tenant: a second upload with it is a
 * new version of that document) and the `inactive` flag (kept indexed, never found; ADR 25).
 */
export const externalIdsAndInactive: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('documents')
      .addColumn('external_id', 'text')
      .addColumn('inactive', 'boolean', (c) => c.notNull().defaultTo(false))
      .execute();
    await sql`CREATE UNIQUE INDEX documents_external_id ON documents (tenant_id, external_id)
      WHERE external_id IS NOT NULL`.execute(db);
  },
};
