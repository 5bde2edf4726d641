import { type Kysely, type Migration, sql } from 'kysely';

/** The trace context of the request that wrote an outbox row, so its event continues that trace. */
export const outboxTraceHeaders: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('outbox')
      .addColumn('headers', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .execute();
  },
};
