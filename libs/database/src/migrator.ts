import { Kysely, Migrator, sql, type Migration } from 'kysely';
import { quoteIdent } from './database';

export type Migrations = Record<string, Migration>;

export interface MigrationResult {
  applied: string[];
}

/**
 * Applies the service's migrations to its own schema. Names sort by timestamp prefix
 * (`20261122T1200_create_documents`). Kysely takes a lock, so concurrent replicas are safe.
 */
export async function migrateToLatest<DB>(
  db: Kysely<DB>,
  schema: string,
  migrations: Migrations,
): Promise<MigrationResult> {
  await sql`CREATE SCHEMA IF NOT EXISTS ${sql.raw(quoteIdent(schema))}`.execute(db);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    throw new Error(`migrations of schema ${schema} failed: ${String(error)}`, { cause: error });
  }
  return {
    applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
  };
}

/** Names of migrations not yet applied; readiness stays false while any are pending. */
export async function pendingMigrations<DB>(
  db: Kysely<DB>,
  schema: string,
  migrations: Migrations,
): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
  });
  const all = await migrator.getMigrations();
  return all.filter((m) => !m.executedAt).map((m) => m.name);
}
