import { randomUUID } from 'node:crypto';

import { createPool } from '@kb/database';
import { localToken } from '@kb/kb-cli/api';
import { knowledgeBaseStats, type RestEndpoint } from '@kb/kb-cli/api';
import { Pool } from 'pg';

export interface EmptyBenchOptions {
  documentsUrl: string;
  /** document-service's database and schema, where the documents are seeded. */
  databaseUrl: string;
  schema: string;
  /** The pgvector database (`VECTOR_DATABASE_URL`), where their vectors are seeded. */
  vectorDatabaseUrl: string;
  documents: number;
  /** Chunks seeded per document in each index. */
  chunks: number;
  /** Longest wait for the index cleanup and the other tenant's document. */
  timeoutMs: number;
  log: (line: string) => void;
}

/**
 * Where indexing-service keeps the chunks (the same names as `@kb/vector-store`'s `vectorTable`
 * and `@kb/lexical-index`'s `LEXICAL_SCHEMA`): the default model's 384 dimensions
 * (all-MiniLM-L6-v2), and the lexical index with its postings.
 */
const DIMENSION = 384;
const VECTOR_TABLE = `kb_vectors_${DIMENSION}`;
const LEXICAL_SCHEMA = 'search_index';
/** Words seeded chunks are made of: 2,000 made-up words, each chunk 80 of them (about an 800-character chunk's 78 distinct terms). */
const VOCABULARY = Array.from({ length: 2000 }, (_, i) => {
  const syllables = ['ka', 'ro', 'mi', 'te', 'lu', 'san', 'dor', 'vel', 'ith', 'qua'];
  let word = '';
  for (let n = i + 11; n > 0; n = Math.floor(n / 10)) word += syllables[n % 10];
  return word;
});
const WORDS_PER_CHUNK = 80;
/** Documents seeded per statement, so progress shows and no statement holds 50,000 rows. */
const SEED_BATCH = 2500;
const POLL_MS = 250;

export interface EmptyBenchResult {
  benchmark: 'empty';
  documents: number;
  deletedCount: number;
  /** The DELETE as the client waited for it. */
  wallMs: number;
  /** The job as document-service timed it. */
  jobMs: number;
  /** Documents left in the knowledge base afterwards (0 when it worked). */
  left: number;
  /** Index rows seeded for the emptied documents: vectors, lexical chunks and their postings. */
  seeded: { vectors: number; lexicalChunks: number; postings: number; seedMs: number };
  /**
   * From the REST answer until none of the emptied documents' rows is left in the vector table,
   * the lexical chunks and the postings (polled in SQL every 250 ms); null on timeout.
   */
  indexCleanupMs: number | null;
  /** From the DELETE until the indexes are clean: the whole job. */
  totalMs: number | null;
  /**
   * Another tenant's document uploaded right after the answer: from its upload until it is
   * `indexed` (it shares kb.document.v1's partitions with the removal batches).
   */
  otherTenantIndexedMs: number | null;
  /** Whole job (index cleanup included) under 30 s, nothing left. */
  withinBudget: boolean;
}

/**
 * `DELETE /v1/knowledge-bases/{id}/documents` on a knowledge base of `documents` documents.
 * The documents are seeded straight into document-service's table, and their chunks into the
 * vector and lexical indexes (uploading 50,000 through the pipeline would take far longer than
 * what is measured); the empty itself goes through the public REST API, which enqueues the
 * removal as `documents_removed` events of 1,000 ids (docs/adr/0024). Measured: the answer, the
 * index cleanup (until none of the rows is left), and how long another tenant's document
 * uploaded right after takes to be indexed.
 *
 * The seeding writes other services' private tables on purpose (document-service's `documents`,
 * indexing-service's `search_index.chunks` and `postings`, the pgvector store's `kb_vectors_384`):
 * 50,000 documents through the pipeline take hours here, and only the empty is measured. Those
 * tables' schema changes must change this SQL too; the reads that check the cleanup are the same
 * tables'.
 */
export async function runEmptyBench(options: EmptyBenchOptions): Promise<EmptyBenchResult> {
  const tenant = `bench-empty-${randomUUID().slice(0, 8)}`;
  const endpoint: RestEndpoint = {
    documentsUrl: options.documentsUrl,
    token: await localToken({ tenant, user: 'bench', roles: ['editor'] }),
  };
  const id = 'bench';
  const created = await fetch(`${options.documentsUrl}/v1/knowledge-bases`, {
    method: 'POST',
    headers: { authorization: `Bearer ${endpoint.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id, name: 'empty benchmark' }),
  });
  if (!created.ok) throw new Error(`creating the knowledge base: ${created.status}`);
  const pool = createPool({ url: options.databaseUrl, schema: options.schema, maxConnections: 2 });
  // The lexical index's trigger names its postings table unqualified: its own search path.
  const lexicalPool = createPool({
    url: options.databaseUrl,
    schema: LEXICAL_SCHEMA,
    maxConnections: 1,
  });
  // pgvector's tables are in the vector database's default schema.
  const vectorPool = new Pool({ connectionString: options.vectorDatabaseUrl, max: 1 });
  try {
    options.log(`seeding ${options.documents} documents in SQL for tenant ${tenant}`);
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO documents (id, tenant_id, title, filename, content_type, size_bytes, sha256,
         blob_key, version, status, metadata, tags, knowledge_base_ids,
         explicit_knowledge_base_ids, owner_id, acl, principals, stage_times, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'seed ' || n, 'seed.txt', 'text/plain', 10,
         md5(n::text) || md5(n::text), 'blobs/' || $1 || '/sha256/seed', 1, 'indexed', '{}'::jsonb,
         '{}'::text[], ARRAY[$2], ARRAY[$2], 'bench',
         '{"users":[],"groups":[],"roles":[],"tenant":false}'::jsonb, ARRAY['u:bench'],
         '{}'::jsonb, now(), now()
       FROM generate_series(1, $3::int) AS n
       RETURNING id`,
      [tenant, id, options.documents],
    );
    const seeded = await seedIndexRows(
      lexicalPool,
      vectorPool,
      tenant,
      id,
      rows.map((row) => row.id),
      options,
    );
    options.log(
      `seeded ${seeded.vectors} vectors, ${seeded.lexicalChunks} lexical chunks and ${seeded.postings} postings in ${seeded.seedMs} ms`,
    );
    options.log('emptying through DELETE /v1/knowledge-bases/bench/documents');
    const started = performance.now();
    const response = await fetch(`${options.documentsUrl}/v1/knowledge-bases/${id}/documents`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${endpoint.token}` },
    });
    const answered = performance.now();
    const wallMs = Math.round(answered - started);
    if (!response.ok) {
      throw new Error(`empty answered ${response.status}: ${await response.text()}`);
    }
    const result = (await response.json()) as { deletedCount: number; tookMs: number };
    const [cleaned, other] = await Promise.all([
      waitForCleanIndexes(lexicalPool, vectorPool, tenant, answered, options),
      otherTenantIndexed(options),
    ]);
    const after = await knowledgeBaseStats(endpoint, id);
    const totalMs = cleaned === null ? null : Math.round(cleaned - started);
    return {
      benchmark: 'empty',
      documents: options.documents,
      deletedCount: result.deletedCount,
      wallMs,
      jobMs: result.tookMs,
      left: after.documentCount,
      seeded,
      indexCleanupMs: cleaned === null ? null : Math.round(cleaned - answered),
      totalMs,
      otherTenantIndexedMs: other,
      withinBudget: totalMs !== null && totalMs < 30_000 && after.documentCount === 0,
    };
  } finally {
    await Promise.all([pool.end(), lexicalPool.end(), vectorPool.end()]);
  }
}

/**
 * The emptied documents' index rows, as indexing-service writes them: `chunks` vectors each of
 * 384 dimensions in the tenant's partition of `kb_vectors_384` (HNSW index maintained), and as
 * many lexical chunks of 80 words, whose postings the index's own trigger writes.
 */
async function seedIndexRows(
  pool: Pool,
  vectorPool: Pool,
  tenant: string,
  knowledgeBaseId: string,
  documentIds: string[],
  options: EmptyBenchOptions,
): Promise<EmptyBenchResult['seeded']> {
  const started = performance.now();
  const table = await vectorPool.query<{ name: string | null }>(
    `SELECT to_regclass($1)::text AS name`,
    [VECTOR_TABLE],
  );
  if (!table.rows[0]?.name) {
    throw new Error(`${VECTOR_TABLE} does not exist: start indexing-service once (it migrates)`);
  }
  await vectorPool.query(`SELECT "${VECTOR_TABLE}_partition"($1)`, [tenant]);
  const uploadedAt = Date.now();
  for (let at = 0; at < documentIds.length; at += SEED_BATCH) {
    const batch = documentIds.slice(at, at + SEED_BATCH);
    const params = [tenant, batch, options.chunks, knowledgeBaseId, VOCABULARY, uploadedAt];
    // A chunk's text: WORDS_PER_CHUNK words of the vocabulary, picked by hashing its key.
    const text = `(SELECT string_agg(($5::text[])[1 + abs(hashtext(d.id || '#' || c || '#' || w)) % ${VOCABULARY.length}], ' ')
                     FROM generate_series(1, ${WORDS_PER_CHUNK}) AS w)`;
    const from = `FROM unnest($2::text[]) AS d(id), generate_series(0, $3::int - 1) AS c`;
    await Promise.all([
      vectorPool.query(
        `INSERT INTO ${VECTOR_TABLE} (namespace, id, document_id, document_version, chunk_index,
           title, text, start_offset, end_offset, embedding, kb_ids, tags, uploaded_at, metadata,
           principals)
         SELECT $1, d.id || '#1#' || c, d.id, 1, c, 'seed', ${text}, c * 800, c * 800 + 799,
           (SELECT array_agg(random() - 0.5)::real[] FROM generate_series(1, ${DIMENSION})
             WHERE d.id IS NOT NULL AND c >= 0)::vector,
           ARRAY[$4], '{}', $6::bigint, '{}', ARRAY['u:bench']
         ${from}`,
        params,
      ),
      pool.query(
        `INSERT INTO ${LEXICAL_SCHEMA}.chunks (tenant_id, document_id, document_version,
           chunk_index, title, text, start_offset, end_offset, kb_ids, tags, uploaded_at,
           metadata, principals)
         SELECT $1, d.id, 1, c, 'seed', ${text}, c * 800, c * 800 + 799, ARRAY[$4], '{}',
           $6::bigint, '{}', ARRAY['u:bench']
         ${from}`,
        params,
      ),
    ]);
    options.log(`seeded the index rows of ${at + batch.length} documents`);
  }
  const counts = await indexRows(pool, vectorPool, tenant);
  return { ...counts, seedMs: Math.round(performance.now() - started) };
}

async function indexRows(pool: Pool, vectorPool: Pool, tenant: string) {
  const [vectors, lexical] = await Promise.all([
    vectorPool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${VECTOR_TABLE} WHERE namespace = $1`,
      [tenant],
    ),
    pool.query<{ chunks: string; postings: string }>(
      `SELECT (SELECT count(*) FROM ${LEXICAL_SCHEMA}.chunks WHERE tenant_id = $1) AS chunks,
              (SELECT count(*) FROM ${LEXICAL_SCHEMA}.postings WHERE tenant_id = $1) AS postings`,
      [tenant],
    ),
  ]);
  return {
    vectors: Number(vectors.rows[0]!.n),
    lexicalChunks: Number(lexical.rows[0]!.chunks),
    postings: Number(lexical.rows[0]!.postings),
  };
}

/** When (performance.now()) none of the tenant's index rows is left; null on timeout. */
async function waitForCleanIndexes(
  pool: Pool,
  vectorPool: Pool,
  tenant: string,
  since: number,
  options: EmptyBenchOptions,
): Promise<number | null> {
  let reported = 0;
  for (;;) {
    const left = await indexRows(pool, vectorPool, tenant);
    const now = performance.now();
    if (left.vectors + left.lexicalChunks + left.postings === 0) return now;
    if (now - since > options.timeoutMs) return null;
    if (now - reported > 5000) {
      options.log(`index rows left: ${JSON.stringify(left)}`);
      reported = now;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Another tenant uploads one document right after the empty: ms until it is indexed. */
async function otherTenantIndexed(options: EmptyBenchOptions): Promise<number | null> {
  const token = await localToken({
    tenant: `bench-other-${randomUUID().slice(0, 8)}`,
    user: 'bench',
    roles: ['editor'],
  });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const started = performance.now();
  const upload = await fetch(`${options.documentsUrl}/v1/documents`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      title: 'Right after the empty',
      text: 'A note uploaded by another tenant while a knowledge base of theirs is emptied.',
    }),
  });
  if (upload.status !== 202) {
    throw new Error(`the other tenant's upload answered ${upload.status}: ${await upload.text()}`);
  }
  const { id } = (await upload.json()) as { id: string };
  for (;;) {
    const response = await fetch(`${options.documentsUrl}/v1/documents/${id}`, { headers });
    const { status } = (await response.json()) as { status: string };
    if (status === 'indexed') return Math.round(performance.now() - started);
    if (status === 'failed') throw new Error(`the other tenant's document ${id} failed`);
    if (performance.now() - started > options.timeoutMs) return null;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
