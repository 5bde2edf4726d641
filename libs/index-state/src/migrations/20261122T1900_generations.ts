import { type Kysely, type Migration, sql } from 'kysely';

/** One counter per tenant, bumped whenever its searchable content changes (cached results carry it). */
export const generations: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`CREATE TABLE generations (tenant_id text PRIMARY KEY, generation bigint NOT NULL)`.execute(
      db,
    );
  },
};
