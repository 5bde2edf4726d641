import type { EditableAttributes, IndexSpace } from '@kb/contracts';
import { createDatabase, createPool } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import { bm25Search } from './bm25-search.sql';
import type { DB } from './db.generated';
import type {
  ChunkLocation,
  ChunkRef,
  LexemePostings,
  LexicalIndex,
  LexicalMatch,
  LexicalQuery,
  LexicalRecord,
  LexicalWrite,
  SpaceChunk,
  TermVector,
} from './lexical-index';
import { LEXICAL_SCHEMA } from './migrations';
import { PgChunkReads } from './pg-chunk-reads';

export { BM25_B, BM25_K1 } from './bm25-search.sql';

/**
 * Okapi BM25 over Postgres full-text search. The text goes through the `english` configuration
 * (stemming, stop words); a chunk matches when it shares any query term; each term scores
 * idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)), with document frequencies counted through
 * the postings table and statistics per index space over the chunks the caller may read. The
 * query text only ever travels as a bound parameter. The `tenant_id` columns hold the index space: they predate pipelines (docs/adr/0012).
 */
export class PgLexicalIndex implements LexicalIndex {
  private readonly pool: Pool;
  /** Over the pool, every table qualified with the schema. */
  private readonly db: Kysely<DB>;
  private readonly schema: string;
  private readonly chunkReads: PgChunkReads;

  constructor(options: { url: string; schema?: string; maxConnections?: number }) {
    const schema = options.schema ?? LEXICAL_SCHEMA;
    this.pool = createPool({
      url: options.url,
      schema,
      maxConnections: options.maxConnections ?? 4,
      applicationName: 'lexical-index',
    });
    this.schema = schema;
    this.db = createDatabase<DB>(this.pool).withSchema(schema);
    this.chunkReads = new PgChunkReads(this.db, schema);
  }

  // A bulk upsert over jsonb_to_recordset: one parameter for a batch of thousands.
  async upsert(space: IndexSpace, records: LexicalWrite[]): Promise<void> {
    if (records.length === 0) return;
    const rows = records.map((r) => ({
      document_id: r.documentId,
      document_version: r.documentVersion,
      chunk_index: r.chunkIndex,
      title: r.title,
      text: r.text,
      start_offset: r.startOffset,
      end_offset: r.endOffset,
      kb_ids: r.attributes.knowledgeBaseIds,
      tags: r.attributes.tags,
      uploaded_at: r.attributes.uploadedAt,
      metadata: r.attributes.metadata,
      principals: r.attributes.principals,
      page: r.page ?? null,
      heading_path: r.headingPath ?? [],
    }));
    await sql`
      INSERT INTO ${sql.table(`${this.schema}.chunks`)}
        (tenant_id, document_id, document_version, chunk_index, title, text, start_offset, end_offset,
         kb_ids, tags, uploaded_at, metadata, principals, page, heading_path)
      SELECT ${space}, r.document_id, r.document_version, r.chunk_index, r.title, r.text,
             r.start_offset, r.end_offset, r.kb_ids, r.tags, r.uploaded_at, r.metadata,
             r.principals, r.page, coalesce(r.heading_path, '{}')
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(document_id text,
             document_version integer, chunk_index integer, title text, text text,
             start_offset integer, end_offset integer, kb_ids text[], tags text[],
             uploaded_at bigint, metadata jsonb, principals text[], page integer,
             heading_path text[])
      ON CONFLICT (tenant_id, document_id, document_version, chunk_index) DO UPDATE SET
        title = EXCLUDED.title, text = EXCLUDED.text,
        start_offset = EXCLUDED.start_offset, end_offset = EXCLUDED.end_offset,
        kb_ids = EXCLUDED.kb_ids, tags = EXCLUDED.tags, uploaded_at = EXCLUDED.uploaded_at,
        metadata = EXCLUDED.metadata, principals = EXCLUDED.principals, page = EXCLUDED.page,
        heading_path = EXCLUDED.heading_path`.execute(this.db);
  }

  search(space: IndexSpace, query: LexicalQuery): Promise<LexicalMatch[]> {
    return bm25Search(this.db, this.pool, this.schema, space, query);
  }

  async setAttributes(
    space: IndexSpace,
    documentId: string,
    attributes: EditableAttributes,
  ): Promise<number> {
    const result = await this.db
      .updateTable('chunks')
      .set({
        kb_ids: attributes.knowledgeBaseIds,
        tags: attributes.tags,
        metadata: JSON.stringify(attributes.metadata),
      })
      .where('tenant_id', '=', space)
      .where('document_id', '=', documentId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async setPrincipals(
    space: IndexSpace,
    documentId: string,
    principals: string[],
  ): Promise<number> {
    const result = await this.db
      .updateTable('chunks')
      .set({ principals })
      .where('tenant_id', '=', space)
      .where('document_id', '=', documentId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async deleteDocument(space: IndexSpace, documentId: string, olderThan?: number): Promise<number> {
    let statement = this.db
      .deleteFrom('chunks')
      .where('tenant_id', '=', space)
      .where('document_id', '=', documentId);
    if (olderThan !== undefined) statement = statement.where('document_version', '<', olderThan);
    return Number((await statement.executeTakeFirst()).numDeletedRows);
  }

  /**
   * The postings go first in one statement over their (tenant, document) index, then the chunks:
   * left to the foreign key's cascade, each chunk row would delete its postings on its own. One
   * transaction, so a search never sees chunks without their postings' counterparts half gone.
   */
  async deleteDocuments(space: IndexSpace, documentIds: string[]): Promise<number> {
    if (documentIds.length === 0) return 0;
    return this.db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('postings')
        .where('tenant_id', '=', space)
        .where((eb) => eb('document_id', '=', eb.fn.any(eb.val(documentIds))))
        .execute();
      const result = await trx
        .deleteFrom('chunks')
        .where('tenant_id', '=', space)
        .where((eb) => eb('document_id', '=', eb.fn.any(eb.val(documentIds))))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    });
  }

  async *documentVersions(
    space: IndexSpace,
  ): AsyncIterable<{ documentId: string; versions: number[] }> {
    const page = 500;
    let after = '';
    for (;;) {
      const rows = await this.db
        .selectFrom('chunks')
        .select([
          'document_id',
          sql<number[]>`array_agg(DISTINCT document_version ORDER BY document_version)`.as(
            'versions',
          ),
        ])
        .where('tenant_id', '=', space)
        .where('document_id', '>', after)
        .groupBy('document_id')
        .orderBy('document_id')
        .limit(page)
        .execute();
      for (const row of rows) yield { documentId: row.document_id, versions: row.versions };
      if (rows.length < page) return;
      after = rows[rows.length - 1]!.document_id;
    }
  }

  termVectors(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, TermVector>> {
    return this.chunkReads.termVectors(space, chunks);
  }

  locations(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkLocation>> {
    return this.chunkReads.locations(space, chunks);
  }

  matching(space: IndexSpace, query: string, chunks: ChunkRef[]): Promise<Set<string>> {
    return this.chunkReads.matching(space, query, chunks);
  }

  chunksAround(space: IndexSpace, anchors: ChunkRef[], radius: number): Promise<LexicalRecord[]> {
    return this.chunkReads.chunksAround(space, anchors, radius);
  }

  /** Every chunk of the space, with what BM25 and the scope read: a snapshot's rows. */
  spaceChunks(space: IndexSpace): Promise<SpaceChunk[]> {
    return this.chunkReads.spaceChunks(space);
  }

  /** The postings of these lexemes in the space, read by the postings' primary key. */
  postingsOf(space: IndexSpace, lexemes: string[]): Promise<LexemePostings[]> {
    return this.chunkReads.postingsOf(space, lexemes);
  }

  /** The distinct lexemes the index's text search configuration makes of a text. */
  analyze(text: string): Promise<string[]> {
    return this.chunkReads.analyze(text);
  }

  /** The title and text of these chunks, by `<document>#<version>#<chunk>`; unknown ones absent. */
  texts(
    space: IndexSpace,
    chunks: ChunkRef[],
  ): Promise<Map<string, { title: string; text: string }>> {
    return this.chunkReads.texts(space, chunks);
  }

  async countDocument(space: IndexSpace, documentId: string): Promise<number> {
    const row = await this.db
      .selectFrom('chunks')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenant_id', '=', space)
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
}
