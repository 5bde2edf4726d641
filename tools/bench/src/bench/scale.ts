import { Client } from 'pg';

import { copyId, documentCopies, lexicalCopies, vectorCopies, vectorIndexes } from './scale.sql';

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
 * of `source`, each copy a document of its own (`copyId`: a UUID drawn from the copy's number and
 * the source's id, so copies lie scattered in key order, the order a snapshot lists chunks in
 * (docs/adr/0061), as a real tenant's random ids do; and not a chunk's 500 copies side by side,
 * which block bounds would skip as no real corpus allows), its vector nudged by up to ±0.01 per
 * dimension so no two are equal, its ACL kept; and its document in document-service's table, so
 * the hit details find it. Returns what the build cost; a tenant already built is left as it is.
 *
 * Writes other services' private tables on purpose (indexing-service's `search_index.chunks` and
 * `postings`, the pgvector store's `kb_vectors_<dimension>`, document-service's
 * `document_service.documents`): no API takes ready-made chunks with
 * their vectors copied. A schema change in any of these tables must change scale.sql.ts too (the bench
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
  const partition = await partitionOf(vectors, table, target);
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
          for (const sql of [...lexicalCopies(), documentCopies()]) {
            await lexical.query(sql, [source, target, ...range]);
          }
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

/**
 * Removes a scaled tenant from both indexes and document-service's table, then rewrites those
 * tables (`VACUUM FULL`, minutes at ×500) so that scans over them, such as the deletion e2e
 * spec's search for a deleted document's text in every table, take as long as before the build.
 */
export async function dropScaledTenant(
  options: Pick<ScaleOptions, 'databaseUrl' | 'vectorDatabaseUrl' | 'dimension' | 'log'>,
  target: string,
): Promise<void> {
  const lexical = new Client({ connectionString: options.databaseUrl });
  const vectors = new Client({ connectionString: options.vectorDatabaseUrl });
  await Promise.all([lexical.connect(), vectors.connect()]);
  try {
    const partition = await partitionOf(vectors, `kb_vectors_${options.dimension}`, target);
    await vectors.query(`DROP TABLE IF EXISTS "${partition}"`);
    options.log(`${target}: vector partition ${partition} dropped`);
    for (const table of [
      'search_index.postings',
      'search_index.chunks',
      'document_service.documents',
    ]) {
      const { rowCount } = await lexical.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [
        target,
      ]);
      options.log(`${target}: ${rowCount ?? 0} rows deleted from ${table}; rewriting it`);
      await lexical.query(`VACUUM (FULL, ANALYZE) ${table}`);
    }
  } finally {
    await Promise.all([lexical.end(), vectors.end()]);
  }
}

/** The scaled tenant's vector partition: `<table>_p_` and 24 hex digits of its name's md5. */
async function partitionOf(vectors: Client, table: string, target: string): Promise<string> {
  const { rows } = await vectors.query<{ name: string }>(`SELECT $1 || left(md5($2), 24) AS name`, [
    `${table}_p_`,
    target,
  ]);
  return rows[0]!.name;
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
            (SELECT ${copyId('$3::integer', 's.document_id')}::text, s.document_version, s.chunk_index
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
