import type { EditableAttributes, IndexSpace } from '@kb/contracts';
import { createPool, quoteIdent } from '@kb/database';
import type { Pool } from 'pg';

import { bm25Search } from './bm25-search.sql';
import type {
  ChunkLocation,
  ChunkRef,
  LexicalIndex,
  LexicalMatch,
  LexicalQuery,
  LexicalRecord,
  LexicalWrite,
  Posting,
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
  private readonly table: string;
  private readonly postings: string;
  private readonly chunkReads: PgChunkReads;

  constructor(options: { url: string; schema?: string; maxConnections?: number }) {
    const schema = options.schema ?? LEXICAL_SCHEMA;
    this.pool = createPool({
      url: options.url,
      schema,
      maxConnections: options.maxConnections ?? 4,
      applicationName: 'lexical-index',
    });
    this.table = `${quoteIdent(schema)}.chunks`;
    this.postings = `${quoteIdent(schema)}.postings`;
    this.chunkReads = new PgChunkReads(this.pool, this.table, this.postings);
  }

  async upsert(space: IndexSpace, records: LexicalWrite[]): Promise<void> {
    if (records.length === 0) return;
    await this.pool.query(
      `INSERT INTO ${this.table}
         (tenant_id, document_id, document_version, chunk_index, title, text, start_offset, end_offset,
          kb_ids, tags, uploaded_at, metadata, principals, page, heading_path)
       SELECT $1, r.document_id, r.document_version, r.chunk_index, r.title, r.text, r.start_offset,
              r.end_offset, r.kb_ids, r.tags, r.uploaded_at, r.metadata, r.principals, r.page,
              coalesce(r.heading_path, '{}')
         FROM jsonb_to_recordset($2::jsonb) AS r(document_id text, document_version integer,
              chunk_index integer, title text, text text, start_offset integer, end_offset integer,
              kb_ids text[], tags text[], uploaded_at bigint, metadata jsonb, principals text[],
              page integer, heading_path text[])
       ON CONFLICT (tenant_id, document_id, document_version, chunk_index) DO UPDATE SET
         title = EXCLUDED.title, text = EXCLUDED.text,
         start_offset = EXCLUDED.start_offset, end_offset = EXCLUDED.end_offset,
         kb_ids = EXCLUDED.kb_ids, tags = EXCLUDED.tags, uploaded_at = EXCLUDED.uploaded_at,
         metadata = EXCLUDED.metadata, principals = EXCLUDED.principals, page = EXCLUDED.page,
         heading_path = EXCLUDED.heading_path`,
      [
        space,
        JSON.stringify(
          records.map((r) => ({
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
          })),
        ),
      ],
    );
  }

  search(space: IndexSpace, query: LexicalQuery): Promise<LexicalMatch[]> {
    return bm25Search(this.pool, { chunks: this.table, postings: this.postings }, space, query);
  }

  async setAttributes(
    space: IndexSpace,
    documentId: string,
    attributes: EditableAttributes,
  ): Promise<number> {
    const result = await this.pool.query(
      `UPDATE ${this.table} SET kb_ids = $3::text[], tags = $4::text[], metadata = $5::jsonb
        WHERE tenant_id = $1 AND document_id = $2`,
      [
        space,
        documentId,
        attributes.knowledgeBaseIds,
        attributes.tags,
        JSON.stringify(attributes.metadata),
      ],
    );
    return result.rowCount ?? 0;
  }

  async setPrincipals(
    space: IndexSpace,
    documentId: string,
    principals: string[],
  ): Promise<number> {
    const result = await this.pool.query(
      `UPDATE ${this.table} SET principals = $3::text[] WHERE tenant_id = $1 AND document_id = $2`,
      [space, documentId, principals],
    );
    return result.rowCount ?? 0;
  }

  async deleteDocument(space: IndexSpace, documentId: string, olderThan?: number): Promise<number> {
    const result = await this.pool.query(
      `DELETE FROM ${this.table} WHERE tenant_id = $1 AND document_id = $2
         AND ($3::integer IS NULL OR document_version < $3::integer)`,
      [space, documentId, olderThan ?? null],
    );
    return result.rowCount ?? 0;
  }

  /**
   * The postings go first in one statement over their (tenant, document) index, then the chunks:
   * left to the foreign key's cascade, each chunk row would delete its postings on its own. One
   * transaction, so a search never sees chunks without their postings' counterparts half gone.
   */
  async deleteDocuments(space: IndexSpace, documentIds: string[]): Promise<number> {
    if (documentIds.length === 0) return 0;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `DELETE FROM ${this.postings} WHERE tenant_id = $1 AND document_id = ANY($2::text[])`,
        [space, documentIds],
      );
      const result = await client.query(
        `DELETE FROM ${this.table} WHERE tenant_id = $1 AND document_id = ANY($2::text[])`,
        [space, documentIds],
      );
      await client.query('COMMIT');
      return result.rowCount ?? 0;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async *documentVersions(
    space: IndexSpace,
  ): AsyncIterable<{ documentId: string; versions: number[] }> {
    const page = 500;
    let after = '';
    for (;;) {
      const { rows } = await this.pool.query<{ document_id: string; versions: number[] }>(
        `SELECT document_id, array_agg(DISTINCT document_version ORDER BY document_version) AS versions
           FROM ${this.table} WHERE tenant_id = $1 AND document_id > $2
          GROUP BY document_id ORDER BY document_id LIMIT $3`,
        [space, after, page],
      );
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
  postingsOf(space: IndexSpace, lexemes: string[]): Promise<Posting[]> {
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
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${this.table} WHERE tenant_id = $1 AND document_id = $2`,
      [space, documentId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
