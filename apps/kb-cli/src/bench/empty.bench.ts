import { randomUUID } from 'node:crypto';

import { createPool } from '@kb/database';

import { localToken } from '../client/kb-client';
import { knowledgeBaseStats, type RestEndpoint } from '../collections/collections.command';

export interface EmptyBenchOptions {
  documentsUrl: string;
  /** document-service's database and schema, where the documents are seeded. */
  databaseUrl: string;
  schema: string;
  documents: number;
  log: (line: string) => void;
}

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
  withinBudget: boolean;
}

/**
 * `DELETE /v1/knowledge-bases/{id}/documents` on a knowledge base of `documents` documents.
 * The documents are seeded straight into document-service's table (uploading 50,000 through
 * the pipeline would take far longer than what is measured); the empty itself goes through the
 * public REST API and writes one `deleted` event per document, as any delete does.
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
  const pool = createPool({ url: options.databaseUrl, schema: options.schema, maxConnections: 1 });
  try {
    options.log(`seeding ${options.documents} documents in SQL for tenant ${tenant}`);
    await pool.query(
      `INSERT INTO documents (id, tenant_id, title, filename, content_type, size_bytes, sha256,
         blob_key, version, status, metadata, tags, knowledge_base_ids,
         explicit_knowledge_base_ids, owner_id, acl, principals, stage_times, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'seed ' || n, 'seed.txt', 'text/plain', 10,
         md5(n::text) || md5(n::text), 'blobs/' || $1 || '/sha256/seed', 1, 'indexed', '{}'::jsonb,
         '{}'::text[], ARRAY[$2], ARRAY[$2], 'bench',
         '{"users":[],"groups":[],"roles":[],"tenant":false}'::jsonb, ARRAY['u:bench'],
         '{}'::jsonb, now(), now()
       FROM generate_series(1, $3::int) AS n`,
      [tenant, id, options.documents],
    );
  } finally {
    await pool.end();
  }
  options.log('emptying through DELETE /v1/knowledge-bases/bench/documents');
  const started = performance.now();
  const response = await fetch(`${options.documentsUrl}/v1/knowledge-bases/${id}/documents`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${endpoint.token}` },
  });
  const wallMs = Math.round(performance.now() - started);
  if (!response.ok) throw new Error(`empty answered ${response.status}: ${await response.text()}`);
  const result = (await response.json()) as { deletedCount: number; tookMs: number };
  const after = await knowledgeBaseStats(endpoint, id);
  return {
    benchmark: 'empty',
    documents: options.documents,
    deletedCount: result.deletedCount,
    wallMs,
    jobMs: result.tookMs,
    left: after.documentCount,
    withinBudget: wallMs < 30_000 && after.documentCount === 0,
  };
}
