import { Logger } from '@nestjs/common';
import { Kysely, PostgresDialect } from 'kysely';
import { Pool, type PoolConfig } from 'pg';

const log = new Logger('Postgres');

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
  return guardPool(new Pool(config), config.application_name!);
}

/**
 * Keeps a pool alive when the server closes one of its idle connections (a restart, a failover,
 * an administrator): pg emits 'error' on the pool, and an 'error' event without a listener ends
 * the process. The pool has already dropped that client; the next query opens a new one, and a
 * query while the server is away fails on its own (the caller retries or answers 503).
 */
export function guardPool(pool: Pool, name: string): Pool {
  pool.on('error', (error) => {
    log.warn(
      `${name}: an idle connection was closed (${error.message}); a new one opens on demand`,
    );
  });
  // A checked-out client (a transaction waiting on S3, say) has no pool listener: its 'error'
  // would end the process too. Its next query fails instead, and the caller releases it.
  pool.on('connect', (client) => {
    client.on('error', (error) => {
      log.warn(`${name}: a connection in use was lost (${error.message})`);
    });
  });
  return pool;
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
