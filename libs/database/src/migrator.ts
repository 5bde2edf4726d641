import { Kysely, type Migration, Migrator, sql } from 'kysely';

import { quoteIdent } from './database';

export type Migrations = Record<string, Migration>;

/**
 * Where a list of migrations keeps its history. A service's schema holds its own history
 * (`<schema>.kysely_migration`); a family of tables in a shared schema names its own history
 * table instead (pgvector's `kb_vectors_<dimension>` tables, in the vector database's default
 * schema).
 */
export interface MigrationHistory {
  /** Schema of the tables and of the history; absent, the connection's default schema. */
  schema?: string;
  /** History table; absent, Kysely's `kysely_migration` (its lock table is `<table>_lock`). */
  table?: string;
}

export interface MigrationResult {
  applied: string[];
}

/**
 * Applies the migrations not yet in the history. Names sort by timestamp prefix
 * (`20261122T1200_create_documents`). Kysely holds an advisory lock while it migrates, so
 * concurrent replicas are safe. A pending migration may sort before one already applied (some
 * names were dated ahead of the day they were written, and a new one is dated when it is
 * written): it is applied, in name order among the pending ones, rather than refused.
 */
export async function migrateToLatest<DB>(
  db: Kysely<DB>,
  history: string | MigrationHistory,
  migrations: Migrations,
): Promise<MigrationResult> {
  const where = historyOf(history);
  if (where.schema) {
    await sql`CREATE SCHEMA IF NOT EXISTS ${sql.raw(quoteIdent(where.schema))}`.execute(db);
  }
  const { error, results } = await migrator(db, where, migrations).migrateToLatest();
  if (error) {
    throw new Error(`migrations of ${describeHistory(where)} failed: ${String(error)}`, {
      cause: error,
    });
  }
  return {
    applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
  };
}

/** Names of migrations not yet applied; readiness stays false while any are pending. */
export async function pendingMigrations<DB>(
  db: Kysely<DB>,
  history: string | MigrationHistory,
  migrations: Migrations,
): Promise<string[]> {
  const all = await migrator(db, historyOf(history), migrations).getMigrations();
  return all.filter((m) => !m.executedAt).map((m) => m.name);
}

/** `schema acl_service`, or `kb_vectors_384_migration` for a history table in the default schema. */
export function describeHistory(history: MigrationHistory): string {
  const table = history.table ?? 'kysely_migration';
  return history.schema ? `schema ${history.schema}` : `history ${table}`;
}

function historyOf(history: string | MigrationHistory): MigrationHistory {
  return typeof history === 'string' ? { schema: history } : history;
}

function migrator<DB>(db: Kysely<DB>, history: MigrationHistory, migrations: Migrations): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    allowUnorderedMigrations: true,
    ...(history.schema ? { migrationTableSchema: history.schema } : {}),
    ...(history.table
      ? { migrationTableName: history.table, migrationLockTableName: `${history.table}_lock` }
      : {}),
  });
}
