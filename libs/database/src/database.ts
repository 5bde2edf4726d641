import { Kysely, PostgresDialect } from 'kysely';
import { Pool, type PoolConfig } from 'pg';

export interface DatabaseOptions {
  url: string;
  /** Postgres schema owned by the calling service; every query is scoped to it through search_path. */
  schema: string;
  maxConnections?: number;
  applicationName?: string;
}

export function createPool(options: DatabaseOptions): Pool {
  const config: PoolConfig = {
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    application_name: options.applicationName ?? options.schema,
    options: `-c search_path=${quoteIdent(options.schema)},public`,
  };
  return new Pool(config);
}

/** A typed query builder over the service's own schema. */
export function createDatabase<DB>(pool: Pool): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) {
    throw new Error(`invalid SQL identifier "${name}"`);
  }
  return `"${name}"`;
}
