import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Who owns and who may read each document. Documents from before access control stay readable by
 * their whole tenant (`t:*`), as they were.
 */
export const documentAcl: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('documents')
      .addColumn('owner_id', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('acl', 'jsonb', (c) => c.notNull().defaultTo(sql`'{"tenant": true}'::jsonb`))
      .addColumn('principals', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{t:*}'::text[]`))
      .execute();
    await sql`CREATE INDEX documents_principals ON documents USING gin (principals)`.execute(db);
  },
};
