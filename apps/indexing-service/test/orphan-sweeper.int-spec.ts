import { randomUUID } from 'node:crypto';

import { tenantSpace, toTenantId } from '@kb/contracts';
import { createDatabase, createPool, migrateToLatest } from '@kb/database';
import { PgDocumentIndexState, PgIndexGenerations } from '@kb/index-state';
import { type LexicalWrite, PgLexicalIndex } from '@kb/lexical-index';
import { PgVectorStore, type VectorRecord } from '@kb/vector-store';
import { sql } from 'kysely';

import { OrphanSweeper } from '../src/indexing/orphan.sweeper';
import { searchIndexMigrations } from '../src/migrations';

jest.setTimeout(60_000);

const DIM = 8;

/**
 * Real Postgres for the lexical index and the bookkeeping (a throw-away schema), real pgvector
 * for the vectors (a tenant of its own). Each document is put in the state a race leaves behind.
 */
describe('OrphanSweeper', () => {
  const schema = `sweep_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const url = process.env['DATABASE_URL']!;
  const tenantId = toTenantId(`t-${randomUUID().slice(0, 8)}`);
  const tenant = tenantSpace(tenantId);
  const lexical = new PgLexicalIndex({ url, schema });
  const generations = new PgIndexGenerations({ url, schema });
  const state = new PgDocumentIndexState({ url, schema });
  const vectors = new PgVectorStore({ url: process.env['VECTOR_DATABASE_URL']! });
  const sweeper = new OrphanSweeper(vectors, lexical, generations, state, {
    ORPHAN_SWEEP_INTERVAL_MS: 0,
  });
  const [replaced, deleted, inFlight, unknown] = [1, 2, 3, 4].map(() => randomUUID());

  const chunk = (documentId: string, version: number, chunkIndex: number): VectorRecord => ({
    documentId,
    documentVersion: version,
    chunkIndex,
    vector: Array.from({ length: DIM }, (_, i) => (i === chunkIndex % DIM ? 1 : 0.1)),
    title: 'Doc',
    text: `chunk ${chunkIndex} of version ${version}`,
    startOffset: 0,
    endOffset: 10,
    attributes: { knowledgeBaseIds: [], tags: [], metadata: {}, uploadedAt: 0, principals: [] },
  });
  const write = async (records: VectorRecord[]) => {
    await vectors.upsert(tenant, records);
    await lexical.upsert(
      tenant,
      records.map(({ vector: _vector, ...row }): LexicalWrite => row),
    );
  };
  const versionsIn = async (documentId: string) => {
    const held = { vectors: [] as number[], lexical: [] as number[] };
    for await (const entry of vectors.documentVersions(tenant)) {
      if (entry.documentId === documentId) held.vectors = entry.versions;
    }
    for await (const entry of lexical.documentVersions(tenant)) {
      if (entry.documentId === documentId) held.lexical = entry.versions;
    }
    return held;
  };

  beforeAll(async () => {
    const pool = createPool({ url, schema, maxConnections: 1 });
    await migrateToLatest(createDatabase(pool), schema, searchIndexMigrations);
    await pool.end();
    await vectors.ensureReady(DIM);

    // v1 finished after v2 had already removed its predecessors.
    await state.claimVersion(tenant, replaced, 2);
    await write([chunk(replaced, 1, 0), chunk(replaced, 1, 1), chunk(replaced, 2, 0)]);
    // Deleted while its embeddings were in flight; they were written after the delete.
    await state.claimVersion(tenant, deleted, 1);
    await state.tombstone(tenantId, deleted);
    await write([chunk(deleted, 1, 0)]);
    // v3 is claimed and being written: v2 must stay visible until it is in.
    await state.claimVersion(tenant, inFlight, 3);
    await write([chunk(inFlight, 2, 0)]);
    // Indexed before version claims were kept: not assumed orphaned.
    await write([chunk(unknown, 1, 0)]);
  });

  afterAll(async () => {
    const pool = createPool({ url, schema, maxConnections: 1 });
    await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(createDatabase(pool));
    await pool.end();
    await vectors.deleteDocument(tenant, unknown);
    await vectors.deleteDocument(tenant, inFlight);
    await vectors.deleteDocument(tenant, replaced);
    await Promise.all([lexical.close(), generations.close(), state.close(), vectors.close()]);
  });

  it('removes what no document accounts for from both indexes, and nothing else', async () => {
    const before = await generations.current(tenantId);
    const report = await sweeper.sweep([tenant]);

    expect(report).toMatchObject({ vectors: 3, lexical: 3 });
    expect(report.documents.sort()).toEqual([replaced, deleted].sort());
    expect(await versionsIn(replaced)).toEqual({ vectors: [2], lexical: [2] });
    expect(await versionsIn(deleted)).toEqual({ vectors: [], lexical: [] });
    expect(await versionsIn(inFlight)).toEqual({ vectors: [2], lexical: [2] });
    expect(await versionsIn(unknown)).toEqual({ vectors: [1], lexical: [1] });
    // Cached results may hold the removed chunks: the generation moved on.
    expect(await generations.current(tenantId)).toBeGreaterThan(before);
  });

  it('finds nothing more on a second pass, and leaves the generation alone', async () => {
    const before = await generations.current(tenantId);
    expect(await sweeper.sweep([tenant])).toEqual({ vectors: 0, lexical: 0, documents: [] });
    expect(await generations.current(tenantId)).toBe(before);
  });
});
