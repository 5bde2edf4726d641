import { loadConfig } from '@kb/config';
import type { MigrationPlan, Migrations } from '@kb/database';
import type { z } from 'zod';

import { aclConfigSchema } from '../config/acl.config';
import { createAclTables } from './20261123T1100_acl_tables';
import { createCasbinRules } from './20261123T1110_casbin_rules';
import { createGrantEnds } from './20261127T0646_grant_ends';

/** This service's migrations, applied in name order to its own schema (DB_SCHEMA). */
export const migrations: Migrations = {
  '20261123T1100_acl_tables': createAclTables,
  '20261123T1110_casbin_rules': createCasbinRules,
  '20261127T0646_grant_ends': createGrantEnds,
};

/** The variables migrating reads: the Helm hook's container is given these and no others. */
const migrationConfigSchema = aclConfigSchema.pick({ DATABASE_URL: true, DB_SCHEMA: true });
type MigrationConfig = z.infer<typeof migrationConfigSchema>;

export const loadMigrationConfig = (): MigrationConfig => loadConfig(migrationConfigSchema);

/** What `migrate` (and the start with MIGRATE_ON_START) applies, and readiness waits for. */
export const migrationPlans = (config: MigrationConfig): MigrationPlan[] => [
  { url: config.DATABASE_URL, schema: config.DB_SCHEMA, migrations },
];
