import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Fair dispatch (review N7): `leased_until` marks the deliveries a dispatcher is sending right now,
 * so the claim counts each tenant's tries in flight (across replicas) and gives a tenant no more
 * than its share; due deliveries are found tenant by tenant through `deliveries_due_by_tenant`.
 */
export const addDeliveryLeases: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE deliveries ADD COLUMN leased_until timestamptz`.execute(db);
    await sql`
      CREATE INDEX deliveries_due_by_tenant ON deliveries (tenant_id, next_attempt_at)
       WHERE status = 'pending'`.execute(db);
    await sql`
      CREATE INDEX deliveries_leased ON deliveries (tenant_id)
       WHERE leased_until IS NOT NULL`.execute(db);
  },
};
