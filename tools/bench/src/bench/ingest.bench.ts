import { randomUUID } from 'node:crypto';
import { readdir, readFile, readlink } from 'node:fs/promises';

import { KbClient, type KbEndpoints, localToken } from '@kb/kb-cli/api';
import { Client } from 'pg';

import { loadBeir } from '../eval/beir';
import { ingest, waitIndexed } from '../eval/eval.command';
import { type ReferenceBatching, referenceIngest } from './reference';

export interface IngestBenchOptions extends Omit<KbEndpoints, 'token'> {
  dataset: string;
  concurrency: number;
  /** Postgres holding the lexical index: the chunk texts the pipeline embedded. */
  databaseUrl: string;
  /** embedding-service's HTTP root, whose metrics count embedding-cache hits. */
  embeddingUrl: string;
  model: { dir: string; name: string; pooling: 'mean' | 'cls'; batching: ReferenceBatching };
  log: (line: string) => void;
}

const SERVICES = [
  'document-service',
  'parser-service',
  'embedding-service',
  'indexing-service',
  'query-service',
  'acl-service',
];

/** The service processes on this machine whose working directory is this checkout's, by pid. */
export async function servicePids(): Promise<Array<{ pid: string; service: string }>> {
  const found: Array<{ pid: string; service: string }> = [];
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    let cmdline: string;
    try {
      cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replace(/\0/g, ' ');
    } catch {
      continue; // gone
    }
    const service = SERVICES.find((s) => cmdline.includes(`apps/${s}/dist/main.js`));
    // Other checkouts on the machine run the same services: only this one's are measured.
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => '');
    if (service && cwd === process.cwd()) found.push({ pid, service });
  }
  return found;
}

/**
 * Peak resident memory (VmHWM) of each service process on this machine, in MB: the services'
 * high-water mark since they started, found by their command line.
 */
export async function peakRssMb(): Promise<Record<string, number>> {
  const peaks: Record<string, number> = {};
  for (const { pid, service } of await servicePids()) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
    peaks[service] = Math.max(peaks[service] ?? 0, Math.round((kb / 1024) * 10) / 10);
  }
  return peaks;
}

/** CPU time (user + system) each service process has used so far, in ms, from /proc. */
export async function cpuMs(): Promise<Record<string, number>> {
  const used: Record<string, number> = {};
  for (const { pid, service } of await servicePids()) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // utime and stime are the 12th and 13th fields after the command name, in clock ticks of
    // 10 ms (USER_HZ is 100 on Linux).
    const fields = statFields(stat);
    const ticks = Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
    used[service] = (used[service] ?? 0) + ticks * 10;
  }
  return used;
}

/** The local servers the services use, told apart by their command line. */
const SERVERS: Array<{ server: string; matches: (cmdline: string) => boolean }> = [
  { server: 'kafka', matches: (c) => c.includes('kafka.Kafka ') },
  { server: 's3', matches: (c) => c.includes('org.gaul.s3proxy.Main') },
  { server: 'redis', matches: (c) => c.startsWith('redis-server') },
  { server: 'postgres', matches: (c) => /(^|\/)postgres[ :]/.test(c) },
];

/**
 * CPU time (user + system, in ms) each local server has used so far: Kafka, the S3 server, Redis
 * and PostgreSQL (every postgres process, plus the children the postmaster has reaped, so a
 * connection closed between two readings still counts). These servers are the machine's, shared
 * with whatever else uses them meanwhile.
 */
export async function serverCpuMs(): Promise<Record<string, number>> {
  const used: Record<string, number> = {};
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    const [cmdline, stat] = await Promise.all([
      readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''),
      readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''),
    ]);
    const server = SERVERS.find((s) => s.matches(cmdline.replace(/\0/g, ' ')))?.server;
    if (!server || !stat) continue;
    const fields = statFields(stat);
    // utime, stime, and the reaped children's cutime, cstime (only the postmaster has any).
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
    used[server] = (used[server] ?? 0) + ticks * 10;
  }
  return used;
}

/** The fields of `/proc/<pid>/stat` after the command name (which may hold spaces). */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU ms per unit of work (a chunk, a search) of each process between two readings. */
export function cpuPerUnit(
  before: Record<string, number>,
  after: Record<string, number>,
  units: number,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after).map(([name, ms]) => [
      name,
      Math.round(((ms - (before[name] ?? 0)) / Math.max(units, 1)) * 100) / 100,
    ]),
  );
}

/**
 * End-to-end ingestion throughput: uploads a BEIR corpus through REST into a fresh tenant and
 * waits until every distinct document is indexed. Then embeds the very chunks the pipeline
 * produced (read back from the lexical index) with the same model run directly by onnxruntime-node,
 * batches sorted by length and sized as the services size them, both cores (`reference_chunks_per_s`), so the pipeline's overhead over
 * the model shows as a ratio.
 */
export async function runIngestBench(options: IngestBenchOptions): Promise<object> {
  const dataset = await loadBeir(options.dataset);
  const tenant = `ingest-${randomUUID().slice(0, 8)}`;
  options.log(`tenant ${tenant}`);
  const client = new KbClient({
    ...options,
    token: await localToken({ tenant, user: 'bench-admin', roles: ['admin'] }),
  });
  try {
    // Every sentence starts with a tag of this run, so the embedding cache (shared by all tenants
    // and runs) cannot answer for an earlier run's chunks: the model embeds them, as on a first
    // ingest. `embedding_cache_hits` reports what it still answered (repeated text in the corpus).
    const tag = tenant.slice(-8);
    const corpus = dataset.corpus.map((entry) => ({
      ...entry,
      text: entry.text.replace(/(^|\. )/g, `$1${tag} `),
    }));
    const hitsBefore = await cacheHits(options.embeddingUrl);
    const [cpuBefore, serversBefore] = await Promise.all([cpuMs(), serverCpuMs()]);
    const started = performance.now();
    await ingest(client, corpus, { concurrency: options.concurrency, log: options.log });
    await waitIndexed(client, corpus, options.log, { pollMs: 1000 });
    const seconds = (performance.now() - started) / 1000;
    const [cpuAfter, serversAfter] = await Promise.all([cpuMs(), serverCpuMs()]);
    const documents = (await client.listAll()).filter((d) => d.status === 'indexed');
    const chunks = documents.reduce((sum, d) => sum + (d.chunkCount ?? 0), 0);
    const peak = await peakRssMb();
    const hits = (await cacheHits(options.embeddingUrl)) - hitsBefore;

    const texts = await chunkTexts(options.databaseUrl, tenant);
    if (texts.length !== chunks) {
      throw new Error(`the lexical index holds ${texts.length} chunks, documents say ${chunks}`);
    }
    const round = (x: number) => Math.round(x * 10) / 10;
    options.log(
      `tenant ${tenant}: ${documents.length} documents, ${chunks} chunks in ${round(seconds)} s`,
    );
    const reference = await referenceIngest(
      { dir: options.model.dir, model: options.model.name, pooling: options.model.pooling },
      texts,
      options.model.batching,
    );
    options.log(`reference: ${JSON.stringify(reference)}`);
    const chunksPerS = chunks / seconds;
    return {
      tenant,
      corpus: { documents: documents.length, chunks },
      ingest: {
        documents: documents.length,
        chunks,
        docs_per_s: round(documents.length / seconds),
        chunks_per_s: round(chunksPerS),
        ...reference,
        chunks_per_s_over_reference:
          Math.round((chunksPerS / reference.reference_chunks_per_s) * 100) / 100,
        // Per process, what load on the machine does not distort as it does wall-clock figures.
        cpu_ms_per_chunk: cpuPerUnit(cpuBefore, cpuAfter, chunks),
        // The servers' share (shared with anything else using them during the run).
        server_cpu_ms_per_chunk: cpuPerUnit(serversBefore, serversAfter, chunks),
        embedding_cache_hits: hits,
        peak_rss_mb: peak,
      },
    };
  } finally {
    client.close();
  }
}

/**
 * The tenant's chunk texts, as indexed, for the reference run of the model alone. Read from
 * indexing-service's `search_index.chunks` on purpose (read-only): the reference must embed exactly
 * the texts the pipeline embedded, and no API lists every chunk of a tenant.
 */
async function chunkTexts(databaseUrl: string, tenant: string): Promise<string[]> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const { rows } = await pg.query<{ text: string }>(
      'SELECT text FROM search_index.chunks WHERE tenant_id = $1 ORDER BY document_id, chunk_index',
      [tenant],
    );
    return rows.map((r) => r.text);
  } finally {
    await pg.end();
  }
}

/** Embedding-cache hits so far, all models (kb_embedding_cache_lookups_total, outcome hit). */
async function cacheHits(embeddingUrl: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', embeddingUrl))).text();
  return [...text.matchAll(/^kb_embedding_cache_lookups_total\{[^}]*outcome="hit"[^}]*\} (\d+)/gm)]
    .map((match) => Number(match[1]))
    .reduce((sum, n) => sum + n, 0);
}
