import { type Kysely, type Migration, sql } from 'kysely';

/** Tags and knowledge-base membership: with metadata and upload time, what search filters see. */
export const documentAttributes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('documents')
      .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
      .addColumn('knowledge_base_ids', sql`text[]`, (c) =>
        c.notNull().defaultTo(sql`'{default}'::text[]`),
      )
      .execute();
  },
};
