import { createPool, quoteIdent } from '@kb/database';
import type { Pool } from 'pg';
import type { LexicalIndex, LexicalMatch, LexicalRecord } from './lexical-index';
import { LEXICAL_SCHEMA } from './migrations';

/**
 * Postgres full-text search. A query's words are OR-ed (not AND-ed, as `plainto_tsquery` would),
 * so a long natural-language question still matches chunks that share only some of its words;
 * `ts_rank_cd` with length normalization orders them. The query text only ever travels as a bound
 * parameter.
 */
export class PgLexicalIndex implements LexicalIndex {
  private readonly pool: Pool;
  private readonly table: string;

  constructor(options: { url: string; schema?: string; maxConnections?: number }) {
    const schema = options.schema ?? LEXICAL_SCHEMA;
    this.pool = createPool({
      url: options.url,
      schema,
      maxConnections: options.maxConnections ?? 4,
      applicationName: 'lexical-index',
    });
    this.table = `${quoteIdent(schema)}.chunks`;
  }

  async upsert(tenantId: string, records: LexicalRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.pool.query(
      `INSERT INTO ${this.table}
         (tenant_id, document_id, document_version, chunk_index, title, text, start_offset, end_offset)
       SELECT $1, r.document_id, r.document_version, r.chunk_index, r.title, r.text, r.start_offset, r.end_offset
         FROM jsonb_to_recordset($2::jsonb) AS r(document_id text, document_version integer,
              chunk_index integer, title text, text text, start_offset integer, end_offset integer)
       ON CONFLICT (tenant_id, document_id, document_version, chunk_index) DO UPDATE SET
         title = EXCLUDED.title, text = EXCLUDED.text,
         start_offset = EXCLUDED.start_offset, end_offset = EXCLUDED.end_offset`,
      [
        tenantId,
        JSON.stringify(
          records.map((r) => ({
            document_id: r.documentId,
            document_version: r.documentVersion,
            chunk_index: r.chunkIndex,
            title: r.title,
            text: r.text,
            start_offset: r.startOffset,
            end_offset: r.endOffset,
          })),
        ),
      ],
    );
  }

  async search(tenantId: string, query: string, topK: number): Promise<LexicalMatch[]> {
    const { rows } = await this.pool.query<Row>(
      `WITH q AS (
         SELECT nullif(replace(plainto_tsquery('english', $2)::text, ' & ', ' | '), '')::tsquery AS query
       )
       SELECT document_id, document_version, chunk_index, title, text, start_offset, end_offset,
              ts_rank_cd(tsv, q.query, 1) AS score
         FROM ${this.table}, q
        WHERE tenant_id = $1 AND q.query IS NOT NULL AND tsv @@ q.query
        ORDER BY score DESC, document_id, chunk_index
        LIMIT $3`,
      [tenantId, query, topK],
    );
    return rows.map((row) => ({
      documentId: row.document_id,
      documentVersion: row.document_version,
      chunkIndex: row.chunk_index,
      title: row.title,
      text: row.text,
      startOffset: row.start_offset,
      endOffset: row.end_offset,
      score: Number(row.score),
    }));
  }

  async deleteDocument(
    tenantId: string,
    documentId: string,
    keepVersion?: number,
  ): Promise<number> {
    const result = await this.pool.query(
      `DELETE FROM ${this.table} WHERE tenant_id = $1 AND document_id = $2
         AND ($3::integer IS NULL OR document_version <> $3::integer)`,
      [tenantId, documentId, keepVersion ?? null],
    );
    return result.rowCount ?? 0;
  }

  async countDocument(tenantId: string, documentId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${this.table} WHERE tenant_id = $1 AND document_id = $2`,
      [tenantId, documentId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

interface Row {
  document_id: string;
  document_version: number;
  chunk_index: number;
  title: string;
  text: string;
  start_offset: number;
  end_offset: number;
  score: number;
}
