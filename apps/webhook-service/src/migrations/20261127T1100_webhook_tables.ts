import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Subscriptions, the deliveries owed to them (one per subscription and event: the retry queue)
 * and every try of each (the delivery log).
 */
export const createWebhookTables: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY,
        tenant_id text NOT NULL,
        url text NOT NULL,
        events text[] NOT NULL,
        secret text NOT NULL,
        description text NOT NULL DEFAULT '',
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason text,
        disabled_at timestamptz,
        consecutive_failures integer NOT NULL DEFAULT 0,
        failing_since timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`.execute(db);
    await sql`CREATE INDEX webhooks_tenant ON webhooks (tenant_id, created_at)`.execute(db);
    await sql`
      CREATE TABLE deliveries (
        id uuid PRIMARY KEY,
        tenant_id text NOT NULL,
        webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        message_id text NOT NULL,
        event_type text NOT NULL,
        body text NOT NULL,
        status text NOT NULL,
        attempt_count integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        last_status_code integer,
        last_error text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        UNIQUE (webhook_id, message_id)
      )`.execute(db);
    await sql`
      CREATE INDEX deliveries_due ON deliveries (next_attempt_at)
       WHERE status = 'pending'`.execute(db);
    await sql`
      CREATE INDEX deliveries_log ON deliveries (tenant_id, webhook_id, created_at)`.execute(db);
    await sql`
      CREATE TABLE delivery_attempts (
        id bigserial PRIMARY KEY,
        delivery_id uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
        attempt integer NOT NULL,
        at timestamptz NOT NULL,
        succeeded boolean NOT NULL,
        status_code integer,
        error text,
        duration_ms integer NOT NULL,
        UNIQUE (delivery_id, attempt)
      )`.execute(db);
  },
};
