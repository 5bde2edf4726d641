import { loadConfig } from '@kb/config';
import type { MigrationPlan, Migrations } from '@kb/database';
import type { z } from 'zod';

import { webhookConfigSchema } from '../config/webhook.config';
import { createWebhookTables } from './20261127T1100_webhook_tables';
import { addSecretRotationAndRetention } from './20261128T1200_secret_rotation_and_retention';
import { addDeliveryLeases } from './20261128T1201_delivery_leases';

/** This service's migrations, applied in name order to its own schema (DB_SCHEMA). */
export const migrations: Migrations = {
  '20261127T1100_webhook_tables': createWebhookTables,
  '20261128T1200_secret_rotation_and_retention': addSecretRotationAndRetention,
  '20261128T1201_delivery_leases': addDeliveryLeases,
};

/** The variables migrating reads: the Helm hook's container is given these and no others. */
const migrationConfigSchema = webhookConfigSchema.pick({ DATABASE_URL: true, DB_SCHEMA: true });
type MigrationConfig = z.infer<typeof migrationConfigSchema>;

export const loadMigrationConfig = (): MigrationConfig => loadConfig(migrationConfigSchema);

/** What `migrate` (and the start with MIGRATE_ON_START) applies, and readiness waits for. */
export const migrationPlans = (config: MigrationConfig): MigrationPlan[] => [
  { url: config.DATABASE_URL, schema: config.DB_SCHEMA, migrations },
];
