import {
  type DatabaseIntrospector,
  Kysely,
  type Migration,
  Migrator,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';

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
    db: withScopedIntrospection(db, history.schema),
    provider: { getMigrations: async () => migrations },
    allowUnorderedMigrations: true,
    ...(history.schema ? { migrationTableSchema: history.schema } : {}),
    ...(history.table
      ? { migrationTableName: history.table, migrationLockTableName: `${history.table}_lock` }
      : {}),
  });
}

/**
 * The migrator asks the introspector whether its schema and history tables exist. Kysely's
 * Postgres introspector answers by listing the columns of every table in every schema and calling
 * `has_schema_privilege` and `pg_get_serial_sequence` on each schema's name, so a schema dropped
 * while that query runs fails it with "schema … does not exist" (3F000). Suites that migrate and
 * drop throw-away schemas side by side hit that. This one looks only at the history's schema and
 * the search path, and reads names from the catalog without calling functions on them.
 */
function withScopedIntrospection<DB>(db: Kysely<DB>, schema: string | undefined): Kysely<DB> {
  const introspector: DatabaseIntrospector = {
    async getSchemas(): Promise<SchemaMetadata[]> {
      const { rows } = await sql<{ name: string }>`
        SELECT nspname AS name FROM pg_catalog.pg_namespace`.execute(db);
      return rows;
    },
    async getTables(): Promise<TableMetadata[]> {
      const { rows } = await sql<{ name: string; schema: string; kind: string }>`
        SELECT c.relname AS name, ns.nspname AS schema, c.relkind AS kind
          FROM pg_catalog.pg_class c
          JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'v', 'p')
           AND (ns.nspname = ${schema ?? null} OR ns.nspname = ANY (current_schemas(false)))
      `.execute(db);
      return rows.map((r) => ({
        name: r.name,
        schema: r.schema,
        isView: r.kind === 'v',
        columns: [],
      }));
    },
    async getMetadata() {
      return { tables: await this.getTables() };
    },
  };
  return new Proxy(db, {
    get(target, key) {
      if (key === 'introspection') return introspector;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
