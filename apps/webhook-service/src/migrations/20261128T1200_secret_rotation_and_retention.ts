import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Secret rotation: the secret a subscription had before its last rotation keeps signing beside
 * the new one until `previous_secret_expires_at`, so a receiver can switch without losing a
 * message. Retention: finished deliveries are pruned by age, oldest first, through this index.
 */
export const addSecretRotationAndRetention: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      ALTER TABLE webhooks
        ADD COLUMN previous_secret text,
        ADD COLUMN previous_secret_expires_at timestamptz,
        ADD COLUMN secret_rotated_at timestamptz`.execute(db);
    await sql`
      CREATE INDEX deliveries_finished ON deliveries (updated_at)
       WHERE status <> 'pending'`.execute(db);
  },
};
