import type { EditableAttributes } from '@kb/contracts';
import {
  guardPool,
  migrateToLatest,
  pendingMigrations,
  queryOn,
  withAbortableClient,
} from '@kb/database';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Pool, type PoolClient } from 'pg';

import { partitionFunction, vectorTable, vectorTableHistory } from './migrations';
import { nearestStatement } from './pgvector-search.sql';
import {
  toMatch,
  toVectorLiteral,
  type VectorDB,
  type VectorTableName,
} from './pgvector-store.rows';
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
  /** Over the same pool: the statements, typed by the generated types of every dimension's table. */
  private readonly db: Kysely<VectorDB>;
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
    this.db = new Kysely<VectorDB>({ dialect: new PostgresDialect({ pool: this.pool }) });
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
    await this.db
      .insertInto(table)
      .values(
        records.map((record) => ({
          namespace,
          id: vectorId(record),
          document_id: record.documentId,
          document_version: record.documentVersion,
          chunk_index: record.chunkIndex,
          title: record.title,
          text: record.text,
          start_offset: record.startOffset,
          end_offset: record.endOffset,
          kb_ids: record.attributes.knowledgeBaseIds,
          tags: record.attributes.tags,
          uploaded_at: record.attributes.uploadedAt,
          principals: record.attributes.principals,
          metadata: sql<string>`${JSON.stringify(record.attributes.metadata)}::jsonb`,
          embedding: sql<string>`${toVectorLiteral(record.vector)}::vector`,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['namespace', 'id']).doUpdateSet((eb) => ({
          title: eb.ref('excluded.title'),
          text: eb.ref('excluded.text'),
          start_offset: eb.ref('excluded.start_offset'),
          end_offset: eb.ref('excluded.end_offset'),
          kb_ids: eb.ref('excluded.kb_ids'),
          tags: eb.ref('excluded.tags'),
          uploaded_at: eb.ref('excluded.uploaded_at'),
          principals: eb.ref('excluded.principals'),
          metadata: eb.ref('excluded.metadata'),
          embedding: eb.ref('excluded.embedding'),
        })),
      )
      .execute();
  }

  async query(namespace: string, query: VectorQuery): Promise<VectorMatch[]> {
    const statement = nearestStatement(this.db, this.table(), namespace, query);
    // The search's remaining budget (docs/adr/0042): past it the statement is cancelled.
    return withAbortableClient(
      this.pool,
      async (client) => {
        const ef = Math.max(40, query.topK * 2);
        if ((this.efSearch.get(client) ?? DEFAULT_EF_SEARCH) !== ef) {
          await client.query(`SET hnsw.ef_search = ${ef}`);
          this.efSearch.set(client, ef);
        }
        return (await queryOn(client, statement)).map(toMatch);
      },
      query.signal,
    );
  }

  async fetchVectors(namespace: string, chunks: ChunkKey[]): Promise<Map<string, number[]>> {
    if (chunks.length === 0) return new Map();
    const ids = chunks.map(vectorId);
    const rows = await this.db
      .selectFrom(this.table())
      .select(['id', sql<string>`embedding::text`.as('embedding')])
      .where('namespace', '=', namespace)
      .where((eb) => eb('id', '=', eb.fn.any(eb.val(ids))))
      .execute();
    return new Map(rows.map((row) => [row.id, JSON.parse(row.embedding) as number[]]));
  }

  async setAttributes(
    namespace: string,
    documentId: string,
    attributes: EditableAttributes,
  ): Promise<number> {
    return this.inEveryTable(async (table) => {
      const result = await this.db
        .updateTable(table)
        .set({
          kb_ids: attributes.knowledgeBaseIds,
          tags: attributes.tags,
          metadata: JSON.stringify(attributes.metadata),
        })
        .where('namespace', '=', namespace)
        .where('document_id', '=', documentId)
        .executeTakeFirst();
      return result.numUpdatedRows;
    });
  }

  async setPrincipals(
    namespace: string,
    documentId: string,
    principals: string[],
  ): Promise<number> {
    return this.inEveryTable(async (table) => {
      const result = await this.db
        .updateTable(table)
        .set({ principals })
        .where('namespace', '=', namespace)
        .where('document_id', '=', documentId)
        .executeTakeFirst();
      return result.numUpdatedRows;
    });
  }

  async deleteDocument(namespace: string, documentId: string, olderThan?: number): Promise<number> {
    return this.inEveryTable(async (table) => {
      let statement = this.db
        .deleteFrom(table)
        .where('namespace', '=', namespace)
        .where('document_id', '=', documentId);
      if (olderThan !== undefined) statement = statement.where('document_version', '<', olderThan);
      return (await statement.executeTakeFirst()).numDeletedRows;
    });
  }

  /** One DELETE per vector table for the whole batch, pruned to the namespace's partition. */
  async deleteDocuments(namespace: string, documentIds: string[]): Promise<number> {
    if (documentIds.length === 0) return 0;
    return this.inEveryTable(async (table) => {
      const result = await this.db
        .deleteFrom(table)
        .where('namespace', '=', namespace)
        .where((eb) => eb('document_id', '=', eb.fn.any(eb.val(documentIds))))
        .executeTakeFirst();
      return result.numDeletedRows;
    });
  }

  isReady(): boolean {
    return this.dimension !== undefined;
  }

  /** Keyset pages over the (namespace, document_id) index. */
  async *documentVersions(namespace: string): AsyncIterable<DocumentVersions> {
    let after = '';
    for (;;) {
      const rows = await this.db
        .selectFrom(this.table())
        .select([
          'document_id',
          sql<number[]>`array_agg(DISTINCT document_version ORDER BY document_version)`.as(
            'versions',
          ),
        ])
        .where('namespace', '=', namespace)
        .where('document_id', '>', after)
        .groupBy('document_id')
        .orderBy('document_id')
        .limit(LIST_PAGE)
        .execute();
      for (const row of rows) yield { documentId: row.document_id, versions: row.versions };
      if (rows.length < LIST_PAGE) return;
      after = rows[rows.length - 1]!.document_id;
    }
  }

  async countDocument(namespace: string, documentId: string): Promise<number> {
    const row = await this.db
      .selectFrom(this.table())
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('namespace', '=', namespace)
      .where('document_id', '=', documentId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  /** Creates the namespace's partition unless this process knows it exists. */
  private async ensurePartition(namespace: string): Promise<void> {
    if (this.partitions.has(namespace)) return;
    await sql`SELECT ${sql.id(partitionFunction(this.table()))}(${namespace})`.execute(this.db);
    this.partitions.add(namespace);
  }

  /**
   * Runs an in-place change (a delete, new attributes or principals) in every vector table of the
   * schema and sums the rows it touched. A document's vectors are in the table of its model's
   * dimension, which a process that has not indexed yet does not know: indexing-service restarted,
   * then a document's delete arrives before any vectors. Naming the namespace and document keeps
   * the change to that document's rows whichever table holds them; with no table, nothing to do.
   */
  private async inEveryTable(change: (table: VectorTableName) => Promise<bigint>) {
    let touched = 0;
    for (const name of await this.vectorTables()) touched += Number(await change(name));
    return touched;
  }

  /**
   * The schema's vector tables (`kb_vectors_<dimension>`), read from the catalog at each call: a
   * table of another dimension may have been made by another process since. Every vector table is
   * partitioned (migration `20261127T1200_kb_vectors_partitions`), so the partitioned tables are
   * the candidates: a few rows, where filtering all of `pg_class` by name (thousands of partitions
   * and their indexes) cost 3.5 ms of the server's time on every indexed document (ADR 29,
   * fourteenth pass). `regclass` prints a name unqualified only when it is on the search path,
   * i.e. in this schema. A catalog read over the pool: a named statement (prepared once per
   * connection), which Kysely does not make.
   */
  private async vectorTables(): Promise<VectorTableName[]> {
    const { rows } = await this.pool.query<{ name: string }>({
      name: 'kb-vector-tables',
      text: 'SELECT partrelid::regclass::text AS name FROM pg_catalog.pg_partitioned_table',
    });
    return rows
      .map((row) => row.name)
      .filter((name): name is VectorTableName => /^kb_vectors_[0-9]+$/.test(name));
  }

  private table(): VectorTableName {
    if (this.dimension === undefined) throw new Error('PgVectorStore.ensureReady() was not called');
    return vectorTable(this.dimension);
  }
}
