import type { EditableAttributes } from '@kb/contracts';
import {
  type FilterColumns,
  filterToSql,
  guardPool,
  migrateToLatest,
  pendingMigrations,
  withAbortableClient,
} from '@kb/database';
import { Kysely, PostgresDialect } from 'kysely';
import { Pool, type PoolClient } from 'pg';

import { partitionFunction, vectorTable, vectorTableHistory } from './migrations';
import { type MatchRow, toMatch, toVectorLiteral } from './pgvector-store.rows';
import type {
  ChunkKey,
  DocumentVersions,
  VectorMatch,
  VectorQuery,
  VectorRecord,
  VectorStore,
} from './vector-store';
import { vectorId } from './vector-store';

export { toVectorLiteral } from './pgvector-store.rows';

export interface PgVectorOptions {
  url: string;
  maxConnections?: number;
  /**
   * Whether `ensureReady` applies the dimension's table migrations (MIGRATE_ON_START of the
   * owner, indexing-service) or only checks that they were applied (the Helm hook migrated;
   * query-service, which only reads). Default true.
   */
  migrate?: boolean;
}

const LIST_PAGE = 500;
/**
 * hnsw.ef_search a connection starts with: twice the 100 candidates a hybrid search asks for
 * (docs/adr/0005), so the usual query needs no SET of its own.
 */
const DEFAULT_EF_SEARCH = 200;
/**
 * What the planner should expect a page read out of order to cost, for this store's queries
 * only. Postgres' default, 4, prices a disk seek; HNSW is random access by nature and is meant to
 * be served from memory, and at that price a namespace of a couple of thousand chunks looked
 * cheaper to scan in full and sort than to search through its index (CISI: 3.4-4.6 ms against
 * 1.0 ms for the same top 100). 1.1 is the usual figure for data in memory or on SSD
 * (docs/adr/0029, twelfth pass).
 */
const RANDOM_PAGE_COST = 1.1;
const FILTER_COLUMNS: FilterColumns = {
  documentId: 'document_id',
  tags: 'tags',
  uploadedAt: 'uploaded_at',
  metadata: 'metadata',
};

/**
 * The self-hosted vector store: pgvector, one partition per namespace with its own HNSW cosine
 * index and the vectors inline (docs/adr/0029). Iterative index scans keep a filtered search
 * returning top-k rows (pgvector >= 0.8). A query is one round trip: the HNSW settings are the
 * connection's own (set at connect, `ef_search` changed only when a query needs another value).
 */
export class PgVectorStore implements VectorStore {
  private readonly pool: Pool;
  /** Namespaces whose partition exists (created by this process or found). */
  private readonly partitions = new Set<string>();
  /** Each connection's hnsw.ef_search, when changed from DEFAULT_EF_SEARCH. */
  private readonly efSearch = new WeakMap<PoolClient, number>();
  /** Over the same pool, for the migrator only; never destroyed (`close` ends the pool). */
  private readonly db: Kysely<unknown>;
  private readonly migrate: boolean;
  private dimension?: number;

  constructor(options: PgVectorOptions) {
    this.pool = guardPool(
      new Pool({
        connectionString: options.url,
        max: options.maxConnections ?? 4,
        // Session settings at connect (startup parameters): no SET on the query path.
        options: [
          '-c hnsw.iterative_scan=relaxed_order',
          `-c hnsw.ef_search=${DEFAULT_EF_SEARCH}`,
          `-c random_page_cost=${RANDOM_PAGE_COST}`,
        ].join(' '),
      }),
      'kb_vectors',
    );
    this.db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: this.pool }) });
    this.migrate = options.migrate ?? true;
  }

  async ensureReady(dimension: number): Promise<void> {
    const table = vectorTable(dimension);
    // Known before the migrations run: a reader whose store is down at boot still knows its table.
    this.dimension = dimension;
    const { migrations, ...history } = vectorTableHistory(dimension);
    if (this.migrate) {
      // Kysely applies them under its advisory lock, so services starting together are safe.
      await migrateToLatest(this.db, history, migrations);
      return;
    }
    const pending = await pendingMigrations(this.db, history, migrations);
    if (pending.length > 0) {
      throw new Error(
        `${table} has migrations pending (${pending.join(', ')}): run indexing-service's migrate with ${dimension} in VECTOR_DIMENSIONS`,
      );
    }
  }

  async upsert(namespace: string, records: VectorRecord[]): Promise<void> {
    if (records.length === 0) return;
    const table = this.table();
    await this.ensurePartition(namespace);
    const columns = 15;
    const values: unknown[] = [];
    const rows = records.map((record, i) => {
      values.push(
        namespace,
        vectorId(record),
        record.documentId,
        record.documentVersion,
        record.chunkIndex,
        record.title,
        record.text,
        record.startOffset,
        record.endOffset,
        record.attributes.knowledgeBaseIds,
        record.attributes.tags,
        record.attributes.uploadedAt,
        record.attributes.principals,
        JSON.stringify(record.attributes.metadata),
        toVectorLiteral(record.vector),
      );
      const params = Array.from({ length: columns }, (_, c) => `$${i * columns + c + 1}`);
      params[columns - 2] = `${params[columns - 2]}::jsonb`;
      params[columns - 1] = `${params[columns - 1]}::vector`;
      return `(${params.join(', ')})`;
    });
    await this.pool.query(
      `INSERT INTO ${table} (namespace, id, document_id, document_version, chunk_index, title, text,
         start_offset, end_offset, kb_ids, tags, uploaded_at, principals, metadata, embedding)
       VALUES ${rows.join(', ')}
       ON CONFLICT (namespace, id) DO UPDATE SET
         title = EXCLUDED.title, text = EXCLUDED.text, start_offset = EXCLUDED.start_offset,
         end_offset = EXCLUDED.end_offset, kb_ids = EXCLUDED.kb_ids, tags = EXCLUDED.tags,
         uploaded_at = EXCLUDED.uploaded_at, principals = EXCLUDED.principals,
         metadata = EXCLUDED.metadata,
         embedding = EXCLUDED.embedding`,
      values,
    );
  }

  async query(namespace: string, query: VectorQuery): Promise<VectorMatch[]> {
    const table = this.table();
    const params: unknown[] = [toVectorLiteral(query.vector), namespace, query.topK];
    const kbs = query.knowledgeBaseIds?.length
      ? `AND kb_ids && $${params.push(query.knowledgeBaseIds)}::text[]`
      : '';
    const acl = query.principals
      ? `AND principals && $${params.push(query.principals)}::text[]`
      : '';
    const filter = filterToSql(query.filter, FILTER_COLUMNS, params);
    const texts = query.withText === false ? `'' AS title, '' AS text` : 'title, text';
    // The search's remaining budget (docs/adr/0042): past it the statement is cancelled.
    return withAbortableClient(
      this.pool,
      async (client) => {
        const ef = Math.max(40, query.topK * 2);
        if ((this.efSearch.get(client) ?? DEFAULT_EF_SEARCH) !== ef) {
          await client.query(`SET hnsw.ef_search = ${ef}`);
          this.efSearch.set(client, ef);
        }
        // `namespace = $2` prunes to the namespace's partition. The filter sits inside the index
        // scan (iterative scans keep going until k rows match); relaxed order means the outer
        // query restores exact order.
        const { rows } = await client.query<MatchRow>(
          `SELECT * FROM (
           SELECT document_id, document_version, chunk_index, ${texts}, start_offset, end_offset,
                  1 - (embedding <=> $1::vector) AS score
             FROM ${table}
            WHERE namespace = $2 ${kbs} ${acl} AND ${filter}
            ORDER BY embedding <=> $1::vector
            LIMIT $3
         ) nearest ORDER BY score DESC, document_id, chunk_index`,
          params,
        );
        return rows.map(toMatch);
      },
      query.signal,
    );
  }

  async fetchVectors(namespace: string, chunks: ChunkKey[]): Promise<Map<string, number[]>> {
    if (chunks.length === 0) return new Map();
    const { rows } = await this.pool.query<{ id: string; embedding: string }>(
      `SELECT id, embedding::text AS embedding FROM ${this.table()}
        WHERE namespace = $1 AND id = ANY($2::text[])`,
      [namespace, chunks.map(vectorId)],
    );
    return new Map(rows.map((row) => [row.id, JSON.parse(row.embedding) as number[]]));
  }

  async setAttributes(
    namespace: string,
    documentId: string,
    attributes: EditableAttributes,
  ): Promise<number> {
    return this.inEveryTable(
      (table) => `UPDATE ${table} SET kb_ids = $3::text[], tags = $4::text[], metadata = $5::jsonb
        WHERE namespace = $1 AND document_id = $2`,
      [
        namespace,
        documentId,
        attributes.knowledgeBaseIds,
        attributes.tags,
        JSON.stringify(attributes.metadata),
      ],
    );
  }

  async setPrincipals(
    namespace: string,
    documentId: string,
    principals: string[],
  ): Promise<number> {
    return this.inEveryTable(
      (table) =>
        `UPDATE ${table} SET principals = $3::text[] WHERE namespace = $1 AND document_id = $2`,
      [namespace, documentId, principals],
    );
  }

  async deleteDocument(namespace: string, documentId: string, olderThan?: number): Promise<number> {
    return this.inEveryTable(
      (table) => `DELETE FROM ${table} WHERE namespace = $1 AND document_id = $2
         AND ($3::integer IS NULL OR document_version < $3::integer)`,
      [namespace, documentId, olderThan ?? null],
    );
  }

  /** One DELETE per vector table for the whole batch, pruned to the namespace's partition. */
  async deleteDocuments(namespace: string, documentIds: string[]): Promise<number> {
    if (documentIds.length === 0) return 0;
    return this.inEveryTable(
      (table) => `DELETE FROM ${table} WHERE namespace = $1 AND document_id = ANY($2::text[])`,
      [namespace, documentIds],
    );
  }

  isReady(): boolean {
    return this.dimension !== undefined;
  }

  /** Keyset pages over the (namespace, document_id) index. */
  async *documentVersions(namespace: string): AsyncIterable<DocumentVersions> {
    let after = '';
    for (;;) {
      const { rows } = await this.pool.query<{ document_id: string; versions: number[] }>(
        `SELECT document_id, array_agg(DISTINCT document_version ORDER BY document_version) AS versions
           FROM ${this.table()} WHERE namespace = $1 AND document_id > $2
          GROUP BY document_id ORDER BY document_id LIMIT $3`,
        [namespace, after, LIST_PAGE],
      );
      for (const row of rows) yield { documentId: row.document_id, versions: row.versions };
      if (rows.length < LIST_PAGE) return;
      after = rows[rows.length - 1]!.document_id;
    }
  }

  async countDocument(namespace: string, documentId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${this.table()} WHERE namespace = $1 AND document_id = $2`,
      [namespace, documentId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** Creates the namespace's partition unless this process knows it exists. */
  private async ensurePartition(namespace: string): Promise<void> {
    if (this.partitions.has(namespace)) return;
    await this.pool.query(`SELECT "${partitionFunction(this.table())}"($1)`, [namespace]);
    this.partitions.add(namespace);
  }

  /**
   * Runs an in-place change (a delete, new attributes or principals) in every vector table of the
   * schema and sums the rows it touched. A document's vectors are in the table of its model's
   * dimension, which a process that has not indexed yet does not know: indexing-service restarted,
   * then a document's delete arrives before any vectors. Naming the namespace and document keeps
   * the change to that document's rows whichever table holds them; with no table, nothing to do.
   */
  private async inEveryTable(statement: (table: string) => string, values: unknown[]) {
    let touched = 0;
    for (const name of await this.vectorTables()) {
      const result = await this.pool.query(statement(`"${name}"`), values);
      touched += result.rowCount ?? 0;
    }
    return touched;
  }

  /**
   * The schema's vector tables (`kb_vectors_<dimension>`), read from the catalog at each call: a
   * table of another dimension may have been made by another process since. Every vector table is
   * partitioned (migration `20261127T1200_kb_vectors_partitions`), so the partitioned tables are
   * the candidates: a few rows, where filtering all of `pg_class` by name (thousands of partitions
   * and their indexes) cost 3.5 ms of the server's time on every indexed document (ADR 29,
   * fourteenth pass). `regclass` prints a name unqualified only when it is on the search path,
   * i.e. in this schema.
   */
  private async vectorTables(): Promise<string[]> {
    const { rows } = await this.pool.query<{ name: string }>({
      name: 'kb-vector-tables',
      text: 'SELECT partrelid::regclass::text AS name FROM pg_catalog.pg_partitioned_table',
    });
    return rows.map((row) => row.name).filter((name) => /^kb_vectors_[0-9]+$/.test(name));
  }

  private table(): string {
    if (this.dimension === undefined) throw new Error('PgVectorStore.ensureReady() was not called');
    return vectorTable(this.dimension);
  }
}
