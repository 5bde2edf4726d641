import { Client } from 'pg';

export interface ScaleOptions {
  /** Postgres of the lexical index (DATABASE_URL). */
  databaseUrl: string;
  /** Postgres of the pgvector store (VECTOR_DATABASE_URL). */
  vectorDatabaseUrl: string;
  /** Vector size of the deployment's model: the table `kb_vectors_<dimension>`. */
  dimension: number;
  log: (line: string) => void;
}

/**
 * A bigger tenant for the benchmark, written directly into both indexes (issue 16 allows it for
 * sizes an ingest through the pipeline would take hours to reach): `copies` copies of every chunk
 * of `source`, each copy a document of its own (`<id>-c<n>`), its vector nudged by up to ±0.01
 * per dimension so no two are equal, its ACL kept. Returns the new tenant's chunk count; a tenant
 * that already holds chunks is left as it is.
 *
 * Writes other services' private tables on purpose (indexing-service's `search_index.chunks`, the
 * pgvector store's `kb_vectors_<dimension>`): no API takes ready-made chunks with their vectors
 * copied, and 100,000 chunks through the pipeline take hours on this machine. A schema change in
 * either store must change this SQL too (the bench fails loudly when it is stale).
 */
export async function scaledTenant(
  options: ScaleOptions,
  source: string,
  target: string,
  copies: number,
): Promise<number> {
  const lexical = new Client({ connectionString: options.databaseUrl });
  const vectors = new Client({ connectionString: options.vectorDatabaseUrl });
  await Promise.all([lexical.connect(), vectors.connect()]);
  // The lexical index's triggers name its tables unqualified.
  await lexical.query('SET search_path = search_index');
  const table = `kb_vectors_${options.dimension}`;
  try {
    const count = async (): Promise<number> =>
      Number(
        (
          await lexical.query<{ n: string }>(
            'SELECT count(*) AS n FROM search_index.chunks WHERE tenant_id = $1',
            [target],
          )
        ).rows[0]!.n,
      );
    const held = await count();
    if (held > 0) return held;
    options.log(`writing ${copies} copies of ${source}'s chunks into ${target}`);
    const started = performance.now();
    await vectors.query(`SELECT "${table}_partition"($1)`, [target]);
    await vectors.query(
      `INSERT INTO ${table} (namespace, id, document_id, document_version, chunk_index, title, text,
              start_offset, end_offset, embedding, kb_ids, tags, uploaded_at, metadata, principals)
       SELECT $2, v.document_id || '-c' || g || '#' || v.document_version || '#' || v.chunk_index,
              v.document_id || '-c' || g, v.document_version, v.chunk_index, v.title, v.text,
              v.start_offset, v.end_offset,
              (SELECT array_agg(x + (random()::real - 0.5) * 0.02 ORDER BY i)
                 FROM unnest(v.embedding::real[]) WITH ORDINALITY AS u(x, i))::vector,
              v.kb_ids, v.tags, v.uploaded_at, v.metadata, v.principals
         FROM ${table} v CROSS JOIN generate_series(1, $3::integer) g
        WHERE v.namespace = $1
       ON CONFLICT (namespace, id) DO NOTHING`,
      [source, target, copies],
    );
    await vectors.query(`ANALYZE ${table}`);
    // The triggers index each copy's text (tsvector, postings), as an ingest would.
    await lexical.query(
      `INSERT INTO search_index.chunks (tenant_id, document_id, document_version, chunk_index,
              title, text, start_offset, end_offset, kb_ids, tags, uploaded_at, metadata,
              principals, page, heading_path)
       SELECT $2, c.document_id || '-c' || g, c.document_version, c.chunk_index, c.title, c.text,
              c.start_offset, c.end_offset, c.kb_ids, c.tags, c.uploaded_at, c.metadata,
              c.principals, c.page, c.heading_path
         FROM search_index.chunks c CROSS JOIN generate_series(1, $3::integer) g
        WHERE c.tenant_id = $1`,
      [source, target, copies],
    );
    await lexical.query('ANALYZE search_index.chunks');
    await lexical.query('ANALYZE search_index.postings');
    const written = await count();
    options.log(
      `${target}: ${written} chunks written in ${Math.round((performance.now() - started) / 1000)} s`,
    );
    return written;
  } finally {
    await Promise.all([lexical.end(), vectors.end()]);
  }
}
