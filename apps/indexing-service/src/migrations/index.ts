import { loadConfig } from '@kb/config';
import type { MigrationPlan, Migrations } from '@kb/database';
import { indexStateMigrations } from '@kb/index-state';
import { LEXICAL_SCHEMA, lexicalIndexMigrations } from '@kb/lexical-index';
import { vectorMigrationPlan } from '@kb/vector-store';
import type { z } from 'zod';

import { indexingConfigSchema } from '../config/indexing.config';

/**
 * Schema `search_index` (`LEXICAL_SCHEMA`): the lexical index's tables and the index state's,
 * applied as one list. They were one list before the index state had a library of its own; Kysely
 * keeps one history per schema and refuses a list missing a name it applied, so the two stay
 * merged here. Each library keeps its files in its own `src/migrations/`.
 */
export const searchIndexMigrations: Migrations = {
  ...lexicalIndexMigrations,
  ...indexStateMigrations,
};

/** The variables migrating reads: the Helm hook's container is given these and no others. */
const migrationConfigSchema = indexingConfigSchema.pick({
  DATABASE_URL: true,
  VECTOR_STORE: true,
  VECTOR_DATABASE_URL: true,
  VECTOR_DIMENSIONS: true,
});
type MigrationConfig = z.infer<typeof migrationConfigSchema>;

export const loadMigrationConfig = (): MigrationConfig => loadConfig(migrationConfigSchema);

/**
 * What `migrate` (and the start with MIGRATE_ON_START) applies, and readiness waits for: the
 * search index, then with pgvector the table of each dimension in VECTOR_DIMENSIONS (one history
 * each, in the vector database). This service owns the vector tables: it writes them.
 */
export function migrationPlans(config: MigrationConfig): MigrationPlan[] {
  const plans: MigrationPlan[] = [
    { url: config.DATABASE_URL, schema: LEXICAL_SCHEMA, migrations: searchIndexMigrations },
  ];
  if (config.VECTOR_STORE === 'pgvector') {
    if (!config.VECTOR_DATABASE_URL)
      throw new Error('VECTOR_STORE=pgvector needs VECTOR_DATABASE_URL');
    for (const dimension of config.VECTOR_DIMENSIONS) {
      plans.push(vectorMigrationPlan(config.VECTOR_DATABASE_URL, dimension));
    }
  }
  return plans;
}
