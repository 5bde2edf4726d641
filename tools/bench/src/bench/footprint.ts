import { readdir, readFile } from 'node:fs/promises';

import { Client } from 'pg';
import { createClient } from 'redis';

import { servicePids } from './ingest.bench';

/** Resident memory in MB, the largest reading while the load ran, per process group. */
export type MemoryMb = Record<string, number>;

const mb = (kb: number): number => Math.round((kb / 1024) * 10) / 10;

/**
 * One reading of resident memory: each service process of this checkout (VmRSS), and the
 * machine's PostgreSQL and Redis. PostgreSQL is one process per connection sharing its buffers,
 * so its figure is the sum of their proportional set sizes (Pss: a shared page counted once in
 * all), not of their RSS. Both servers are the machine's, shared with other sessions.
 */
export async function residentMb(servers = true): Promise<MemoryMb> {
  const kb: Record<string, number> = {};
  const add = (key: string, value: number): void => void (kb[key] = (kb[key] ?? 0) + value);
  for (const { pid, service } of await servicePids()) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    add(service, Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0));
  }
  if (!servers) return Object.fromEntries(Object.entries(kb).map(([k, v]) => [k, mb(v)]));
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replace(
      /\0/g,
      ' ',
    );
    const server = cmdline.startsWith('redis-server')
      ? 'redis'
      : /(^|\/)postgres[ :]/.test(cmdline)
        ? 'postgres'
        : undefined;
    if (!server) continue;
    const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
    add(server, Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0));
  }
  return Object.fromEntries(Object.entries(kb).map(([k, v]) => [k, mb(v)]));
}

/**
 * Samples the services' `residentMb` every `everyMs` until stopped, keeping each group's largest
 * reading; PostgreSQL's and Redis's only at the start and the end. Their Pss walks every page
 * table of every PostgreSQL backend, kernel work that, once a second during the timed passes, may
 * itself slow the searches measured (suspected in the feedback stage's p95, 2026-11-27).
 */
export function sampleMemory(everyMs = 1000): { stop: () => Promise<MemoryMb> } {
  const peak: MemoryMb = {};
  const read = async (servers: boolean): Promise<void> => {
    const reading = await residentMb(servers);
    for (const [k, v] of Object.entries(reading)) peak[k] = Math.max(peak[k] ?? 0, v);
  };
  let last = read(true);
  const timer = setInterval(() => {
    last = last.then(() => read(false));
  }, everyMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await last.then(() => read(true));
      return peak;
    },
  };
}

/** Disk a benched tenant takes on each server, and the servers' totals, in MB. */
export interface DiskMb {
  /** The tenant's pgvector partition: heap and TOAST, then its indexes (HNSW, keys). */
  vector_partition: { table: number; indexes: number } | undefined;
  /**
   * The tenant's share of the lexical tables (they are not partitioned): each table's size with
   * its indexes, times the tenant's fraction of its rows.
   */
  lexical: { chunks: number; postings: number; chunk_rows: number; posting_rows: number };
  databases: { lexical: number; vectors: number };
  /** Redis used_memory (the result and embedding caches of every session on the machine). */
  redis_used_memory: number | undefined;
}

export async function diskMb(options: {
  databaseUrl: string;
  vectorDatabaseUrl: string;
  redisUrl?: string;
  dimension: number;
  tenant: string;
}): Promise<DiskMb> {
  const toMb = (bytes: unknown): number => Math.round((Number(bytes) / 2 ** 20) * 10) / 10;
  const lexical = new Client({ connectionString: options.databaseUrl });
  const vectors = new Client({ connectionString: options.vectorDatabaseUrl });
  await Promise.all([lexical.connect(), vectors.connect()]);
  try {
    const partition = (
      await vectors.query<{ table: string; indexes: string }>(
        `SELECT pg_table_size(c.oid) AS table, pg_indexes_size(c.oid) AS indexes
           FROM pg_class c
          WHERE c.oid = to_regclass(quote_ident($1 || left(md5($2), 24)))`,
        [`kb_vectors_${options.dimension}_p_`, options.tenant],
      )
    ).rows[0];
    const share = async (table: string, key: string) => {
      const { rows } = await lexical.query<{ rows: string; total: string; bytes: string }>(
        `SELECT (SELECT count(*) FROM search_index.${table} WHERE ${key} = $1) AS rows,
                (SELECT greatest(reltuples, 1) FROM pg_class
                  WHERE oid = 'search_index.${table}'::regclass) AS total,
                pg_total_relation_size('search_index.${table}') AS bytes`,
        [options.tenant],
      );
      const row = rows[0]!;
      const rowCount = Number(row.rows);
      return { rows: rowCount, mb: toMb((Number(row.bytes) * rowCount) / Number(row.total)) };
    };
    const chunks = await share('chunks', 'tenant_id');
    const postings = await share('postings', 'tenant_id');
    const sizes = async (client: Client): Promise<number> =>
      toMb(
        (await client.query<{ n: string }>('SELECT pg_database_size(current_database()) AS n'))
          .rows[0]!.n,
      );
    return {
      vector_partition: partition
        ? { table: toMb(partition.table), indexes: toMb(partition.indexes) }
        : undefined,
      lexical: {
        chunks: chunks.mb,
        postings: postings.mb,
        chunk_rows: chunks.rows,
        posting_rows: postings.rows,
      },
      databases: { lexical: await sizes(lexical), vectors: await sizes(vectors) },
      redis_used_memory: options.redisUrl ? await redisUsedMb(options.redisUrl) : undefined,
    };
  } finally {
    await Promise.all([lexical.end(), vectors.end()]);
  }
}

async function redisUsedMb(url: string): Promise<number | undefined> {
  const redis = createClient({ url });
  try {
    await redis.connect();
    const info = await redis.info('memory');
    const bytes = /^used_memory:(\d+)/m.exec(info)?.[1];
    return bytes === undefined ? undefined : Math.round((Number(bytes) / 2 ** 20) * 10) / 10;
  } finally {
    redis.destroy();
  }
}
