import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

import { Client } from 'pg';

/**
 * Where pg_dump and pg_restore are: `PG_BIN` (a directory), else the PATH. The local servers'
 * binaries are under `$KB_HOME/postgres/…/pginstall/bin` (scripts/infra/servers.sh); the major
 * version must be the server's or newer.
 */
export function pgTool(name: 'pg_dump' | 'pg_restore', env = process.env): string {
  const dirs = [env['PG_BIN'], ...(env['PATH'] ?? '').split(delimiter)].filter(
    (dir): dir is string => !!dir,
  );
  for (const dir of dirs) {
    if (existsSync(join(dir, name))) return join(dir, name);
  }
  throw new Error(`${name} not found: put PostgreSQL's bin directory on PATH or in PG_BIN`);
}

/** Runs `command args`, inheriting nothing but stderr's last lines for the error. */
export function run(command: string, args: string[], env = process.env): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command.split('/').pop()} exited with ${code}: ${stderr.trim()}`)),
    );
  });
}

/** The connection URL's database name, for messages (never the password). */
export const databaseName = (url: string): string => new URL(url).pathname.slice(1);

/**
 * Every migration table of the database (`<schema>.kysely_migration`, the vector store's
 * `public.kb_vectors_<dim>_migration`): table → the migration names applied, sorted.
 */
export async function appliedMigrations(url: string): Promise<Record<string, string[]>> {
  return withClient(url, async (client) => {
    const { rows: tables } = await client.query<{ name: string }>(
      `SELECT format('%I.%I', c.table_schema, c.table_name) AS name
         FROM information_schema.columns c
        WHERE c.column_name = 'name'
          AND (c.table_name = 'kysely_migration' OR c.table_name LIKE '%\\_migration')
          AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
        ORDER BY 1`,
    );
    const applied: Record<string, string[]> = {};
    for (const { name } of tables) {
      const { rows } = await client.query<{ name: string }>(
        `SELECT name FROM ${name} ORDER BY name`,
      );
      applied[name] = rows.map((row) => row.name);
    }
    return applied;
  });
}

/** Tables of the database outside PostgreSQL's own schemas. */
export async function tableCount(url: string): Promise<number> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM information_schema.tables
        WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    return rows[0]!.n;
  });
}

/** The tenants that hold documents (document-service's table), for the manifest. */
export async function tenantsOf(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const { rows: exists } = await client.query<{ found: boolean }>(
      `SELECT to_regclass('document_service.documents') IS NOT NULL AS found`,
    );
    if (!exists[0]!.found) return [];
    const { rows } = await client.query<{ tenant_id: string }>(
      'SELECT DISTINCT tenant_id FROM document_service.documents ORDER BY tenant_id',
    );
    return rows.map((row) => row.tenant_id);
  });
}

/** Drops the schemas (and everything in them) before a restore over a migrated database. */
export async function dropSchemas(url: string, schemas: string[]): Promise<void> {
  await withClient(url, async (client) => {
    for (const schema of schemas) {
      await client.query(`DROP SCHEMA IF EXISTS "${schema.replaceAll('"', '""')}" CASCADE`);
    }
  });
}

async function withClient<T>(url: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
