import { type Kysely, type Migration, sql } from 'kysely';

/** Reconciliation: how often a stalled version was sent through the pipeline again. */
export const redrives: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('documents')
      .addColumn('redrives', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`CREATE INDEX documents_unfinished ON documents (updated_at)
      WHERE status NOT IN ('indexed', 'failed')`.execute(db);
  },
};
