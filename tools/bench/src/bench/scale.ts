import { Client } from 'pg';

import { lexicalCopies, vectorCopies, vectorIndexes } from './scale.sql';

export interface ScaleOptions {
  /** Postgres of the lexical index (DATABASE_URL). */
  databaseUrl: string;
  /** Postgres of the pgvector store (VECTOR_DATABASE_URL). */
  vectorDatabaseUrl: string;
  /** Vector size of the deployment's model: the table `kb_vectors_<dimension>`. */
  dimension: number;
  /** Copies written per transaction (and per progress line); a build resumes after the last one. */
  batch?: number;
  /** maintenance_work_mem for the vector indexes built once the rows are in (default 4GB). */
  maintenanceWorkMem?: string;
  log: (line: string) => void;
}

/** What building a scaled tenant cost, kept in a comment on its vector partition. */
export interface ScaleBuild {
  copies: number;
  chunks: number;
  /** Seconds per step and store; a tenant built before these were kept has none. */
  seconds?: { vector_rows: number; vector_indexes: number; lexical: number; total: number };
}

/**
 * A bigger tenant for the benchmark, written directly into both indexes (issue 16 allows it for
 * sizes an ingest through the pipeline would take hours to reach): `copies` copies of every chunk
 * of `source`, each copy a document of its own (`c<n>-<id>`: in key order, the order a snapshot
 * lists chunks in (docs/adr/0061), copy after copy, each a corpus's mix, rather than a chunk's
 * 500 copies side by side, which block bounds would skip as no real corpus allows), its vector
 * nudged by up to ±0.01 per dimension so no two are equal, its ACL kept. Returns what the build cost; a tenant already
 * built is left as it is.
 *
 * Writes other services' private tables on purpose (indexing-service's `search_index.chunks` and
 * `postings`, the pgvector store's `kb_vectors_<dimension>`): no API takes ready-made chunks with
 * their vectors copied. A schema change in either store must change scale.sql.ts too (the bench
 * fails loudly when it is stale). How the copies are written, so that ~1,000,000 chunks (500×
 * CISI) take minutes rather than hours (issue 40):
 * - vectors go into the tenant's partition while it is a table of its own, with only its primary
 *   key; its HNSW and document indexes are built once at the end, then it is attached to
 *   `kb_vectors_<dimension>` (an index maintained per insert costs ~10× more);
 * - a copy's lexical rows are the source chunk's: its tsvector, length and postings are what the
 *   text's triggers computed for the source, copied with the row triggers off for this session
 *   (`session_replication_role`, so the lexical database's user must be a superuser, as the
 *   local `kb` is);
 * - every batch of copies is one transaction per store, so a build stopped at copy k resumes there.
 */
export async function scaledTenant(
  options: ScaleOptions,
  source: string,
  target: string,
  copies: number,
): Promise<ScaleBuild> {
  const lexical = new Client({ connectionString: options.databaseUrl });
  const vectors = new Client({ connectionString: options.vectorDatabaseUrl });
  await Promise.all([lexical.connect(), vectors.connect()]);
  const table = `kb_vectors_${options.dimension}`;
  const partition = (
    await vectors.query<{ name: string }>(`SELECT $1 || left(md5($2), 24) AS name`, [
      `${table}_p_`,
      target,
    ])
  ).rows[0]!.name;
  const log = options.log;
  try {
    const sourceChunks = await countChunks(lexical, source);
    if (sourceChunks === 0) throw new Error(`${source} holds no chunks to copy`);
    const expected = sourceChunks * copies;
    const state = await partitionState(vectors, partition);
    if (state.attached) {
      const held = await countChunks(lexical, target);
      if (held !== expected) {
        throw new Error(
          `${target} holds ${held} of ${expected} lexical chunks but its vector partition is complete: drop the tenant from both indexes and rebuild`,
        );
      }
      return {
        copies,
        chunks: held,
        ...(state.build?.seconds ? { seconds: state.build.seconds } : {}),
      };
    }
    // Only this session's rows skip the triggers: they are copies of rows the triggers wrote.
    await lexical.query(`SET session_replication_role = replica; SET work_mem = '256MB'`);
    await vectors.query(`SET work_mem = '256MB'`);
    if (!state.exists) {
      await vectors.query(
        `CREATE TABLE "${partition}" (LIKE ${table} INCLUDING DEFAULTS INCLUDING STORAGE,
           PRIMARY KEY (namespace, id),
           CONSTRAINT scale_namespace CHECK (namespace = ${vectors.escapeLiteral(target)}))`,
      );
    }
    const spent = state.build?.spent ?? { vector_rows: 0, lexical: 0 };
    let done = state.build?.copies ?? 0;
    if (done > 0) log(`${target}: resuming after copy ${done} of ${copies}`);
    const batch = Math.max(1, options.batch ?? 10);
    const started = performance.now();
    while (done < copies) {
      const last = Math.min(copies, done + batch);
      const range = [done + 1, last] as const;
      let t = performance.now();
      // Lexical first: a batch already there (the vector side was interrupted after it) is kept.
      if (!(await lexicalHas(lexical, source, target, last))) {
        await transaction(lexical, async () => {
          for (const sql of lexicalCopies()) await lexical.query(sql, [source, target, ...range]);
        });
      }
      spent.lexical += (performance.now() - t) / 1000;
      t = performance.now();
      await transaction(vectors, async () => {
        await vectors.query(vectorCopies(table, partition), [source, target, ...range]);
        spent.vector_rows += (performance.now() - t) / 1000;
        await comment(vectors, partition, { copies: last, chunks: sourceChunks * last, spent });
      });
      done = last;
      const elapsed = (performance.now() - started) / 1000;
      const eta = (elapsed / (done - (state.build?.copies ?? 0))) * (copies - done);
      log(
        `${target}: copies ${done}/${copies} (${sourceChunks * done} chunks), lexical ${Math.round(spent.lexical)} s, vector rows ${Math.round(spent.vector_rows)} s, about ${Math.round(eta)} s to go`,
      );
    }
    log(`${target}: building the vector indexes (HNSW, document) of ${partition}`);
    const t = performance.now();
    await vectors.query(`SET maintenance_work_mem = '${options.maintenanceWorkMem ?? '4GB'}'`);
    for (const sql of vectorIndexes(table, partition, target)) await vectors.query(sql);
    const indexSeconds = (performance.now() - t) / 1000;
    await lexical.query('ANALYZE search_index.chunks; ANALYZE search_index.postings');
    const seconds = {
      vector_rows: round(spent.vector_rows),
      vector_indexes: round(indexSeconds),
      lexical: round(spent.lexical),
      total: round(spent.vector_rows + indexSeconds + spent.lexical),
    };
    const build = { copies, chunks: await countChunks(lexical, target), seconds };
    await comment(vectors, partition, build);
    log(`${target}: ${build.chunks} chunks built: ${JSON.stringify(seconds)}`);
    return build;
  } finally {
    await Promise.all([lexical.end(), vectors.end()]);
  }
}

const round = (s: number): number => Math.round(s * 10) / 10;

async function countChunks(lexical: Client, tenant: string): Promise<number> {
  const { rows } = await lexical.query<{ n: string }>(
    'SELECT count(*) AS n FROM search_index.chunks WHERE tenant_id = $1',
    [tenant],
  );
  return Number(rows[0]!.n);
}

/** Whether copy `n` of the source's first chunk is in the lexical index (a batch is all or none). */
async function lexicalHas(lexical: Client, source: string, target: string, n: number) {
  const { rows } = await lexical.query(
    `SELECT 1 FROM search_index.chunks c
      WHERE c.tenant_id = $2
        AND (c.document_id, c.document_version, c.chunk_index) =
            (SELECT 'c' || $3::integer || '-' || s.document_id, s.document_version, s.chunk_index
               FROM search_index.chunks s WHERE s.tenant_id = $1 LIMIT 1)`,
    [source, target, n],
  );
  return rows.length > 0;
}

/** What the partition's comment holds: progress while it is built, its cost once attached. */
interface Recorded extends ScaleBuild {
  spent?: { vector_rows: number; lexical: number };
}

async function partitionState(
  vectors: Client,
  partition: string,
): Promise<{ exists: boolean; attached: boolean; build?: Recorded }> {
  const { rows } = await vectors.query<{ attached: boolean; comment: string | null }>(
    `SELECT c.relispartition AS attached, obj_description(c.oid, 'pg_class') AS comment
       FROM pg_class c WHERE c.oid = to_regclass(quote_ident($1))`,
    [partition],
  );
  const row = rows[0];
  if (!row) return { exists: false, attached: false };
  return {
    exists: true,
    attached: row.attached,
    ...(row.comment ? { build: JSON.parse(row.comment) as Recorded } : {}),
  };
}

/** The build's progress, then its cost, on the partition itself: it commits with the batch. */
async function comment(vectors: Client, partition: string, value: object): Promise<void> {
  await vectors.query(
    `COMMENT ON TABLE "${partition}" IS ${vectors.escapeLiteral(JSON.stringify(value))}`,
  );
}

async function transaction(client: Client, work: () => Promise<void>): Promise<void> {
  await client.query('BEGIN');
  try {
    await work();
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}
