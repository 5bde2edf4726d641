import { loadConfig } from '@kb/config';
import type { MigrationPlan, Migrations } from '@kb/database';
import { z } from 'zod';

import { cacheConfigSchema } from '../config/embedding.config';
import { embeddings } from './20261123T1400_embeddings';

/** Postgres schema of the embedding cache. */
export const CACHE_SCHEMA = 'embedding_cache';

/** The embedding cache's migrations, applied in name order to CACHE_SCHEMA. */
export const cacheMigrations: Migrations = {
  '20261123T1400_embeddings': embeddings,
};

type MigrationConfig = z.infer<typeof cacheConfigSchema>;

/** The variables migrating reads: the Helm hook's container is given these and no others. */
export const loadMigrationConfig = (): MigrationConfig => loadConfig(cacheConfigSchema);

/**
 * What `migrate` (and the start with MIGRATE_ON_START) applies, and readiness waits for; nothing
 * without DATABASE_URL (no cache).
 */
export const migrationPlans = (config: MigrationConfig): MigrationPlan[] =>
  config.DATABASE_URL
    ? [{ url: config.DATABASE_URL, schema: CACHE_SCHEMA, migrations: cacheMigrations }]
    : [];
