import type { IndexSpace } from '@kb/contracts';
import { type Kysely, type RawBuilder, sql } from 'kysely';

import type { DB } from './db.generated';
import { constraintToSql } from './lexical-constraint.sql';
import type {
  ChunkLocation,
  ChunkRef,
  LexemePostings,
  LexicalRecord,
  SpaceChunk,
  TermVector,
} from './lexical-index';
import { parseLexicalQuery } from './lexical-query.parser';

/**
 * The reads of `PgLexicalIndex` beyond search: chunks by reference (texts, locations, term
 * vectors, neighbours, a query's constraint), and a space's rows and postings for a snapshot.
 * The reads by reference join a `jsonb_to_recordset` of the refs (one parameter for any number):
 * `sql` templates, which the builder would only obscure.
 */
export class PgChunkReads {
  private readonly table: RawBuilder<unknown>;

  constructor(
    private readonly db: Kysely<DB>,
    schema: string,
  ) {
    this.table = sql.table(`${schema}.chunks`);
  }

  /**
   * Each chunk's lexemes and their counts, from its own row: what the `chunks_postings` trigger
   * writes to `postings` (a lexeme's count is its number of positions in the tsvector), read with
   * one primary-key lookup per chunk and sent as one JSON object per chunk. Read from `postings`,
   * a chunk's ~50 rows came by the postings' chunk index: one heap page each where the postings
   * were not written chunk by chunk, and 50 rows for the driver to parse (docs/performance.md,
   * 2026-11-28). A chunk without lexemes is absent, as it was.
   */
  async termVectors(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, TermVector>> {
    if (chunks.length === 0) return new Map();
    const { rows } = await sql<{
      document_id: string;
      document_version: number;
      chunk_index: number;
      doc_len: number;
      terms: Record<string, number> | null;
    }>`SELECT c.document_id, c.document_version, c.chunk_index, c.doc_len,
              (SELECT jsonb_object_agg(u.lexeme, coalesce(array_length(u.positions, 1), 1))
                 FROM unnest(c.tsv) AS u) AS terms
         ${this.chunksOfRecordset(space, chunks)}`.execute(this.db);
    const vectors = new Map<string, TermVector>();
    for (const row of rows) {
      if (!row.terms) continue;
      vectors.set(`${row.document_id}#${row.document_version}#${row.chunk_index}`, {
        length: row.doc_len,
        terms: new Map(Object.entries(row.terms)),
      });
    }
    return vectors;
  }

  async locations(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkLocation>> {
    if (chunks.length === 0) return new Map();
    // One primary-key lookup per chunk (LATERAL … LIMIT 1 keeps it parameterized): joined
    // plainly, the planner takes the recordset for 100 rows and hashes a scan of the space's
    // every chunk row (350 buffers for a page of 10 in a CISI tenant, docs/adr/0029).
    const { rows } = await sql<{
      document_id: string;
      document_version: number;
      chunk_index: number;
      page: number | null;
      heading_path: string[];
    }>`SELECT c.document_id, c.document_version, c.chunk_index, c.page, c.heading_path
         ${this.chunksOfRecordset(space, chunks)}`.execute(this.db);
    return new Map(
      rows.map((row) => [
        `${row.document_id}#${row.document_version}#${row.chunk_index}`,
        {
          ...(row.page === null ? {} : { page: row.page }),
          headingPath: row.heading_path,
        },
      ]),
    );
  }

  /**
   * The chunk rows `c` of these refs (a JSON recordset) in the space, one primary-key lookup
   * each: `locations`, `matching` and `texts` read them so.
   */
  private chunksOfRecordset(space: IndexSpace, chunks: ChunkRef[]): RawBuilder<unknown> {
    return sql`FROM jsonb_to_recordset(${JSON.stringify(chunks.map(toRefRow))}::jsonb)
             AS a(document_id text, document_version integer, chunk_index integer)
        CROSS JOIN LATERAL (
          SELECT * FROM ${this.table} c
           WHERE c.tenant_id = ${space} AND c.document_id = a.document_id
             AND c.document_version = a.document_version AND c.chunk_index = a.chunk_index
           LIMIT 1
        ) c`;
  }

  async matching(space: IndexSpace, query: string, chunks: ChunkRef[]): Promise<Set<string>> {
    const constraint = parseLexicalQuery(query).constraint;
    const keys = chunks.map((c) => `${c.documentId}#${c.documentVersion}#${c.chunkIndex}`);
    if (!constraint || chunks.length === 0) return new Set(keys);
    const { rows } = await sql<ChunkRefRow>`SELECT c.document_id, c.document_version, c.chunk_index
         ${this.chunksOfRecordset(space, chunks)}
        WHERE ${constraintToSql(constraint)}`.execute(this.db);
    return new Set(
      rows.map((row) => `${row.document_id}#${row.document_version}#${row.chunk_index}`),
    );
  }

  async chunksAround(
    space: IndexSpace,
    anchors: ChunkRef[],
    radius: number,
  ): Promise<LexicalRecord[]> {
    if (anchors.length === 0 || radius <= 0) return [];
    // A range of the primary key per anchor (OFFSET 0 keeps the subquery parameterized, as in
    // `locations`).
    const { rows } = await sql<ChunkRow>`
      SELECT DISTINCT c.document_id, c.document_version, c.chunk_index, c.title, c.text,
             c.start_offset, c.end_offset
        FROM jsonb_to_recordset(${JSON.stringify(anchors.map(toRefRow))}::jsonb)
             AS a(document_id text, document_version integer, chunk_index integer)
       CROSS JOIN LATERAL (
         SELECT * FROM ${this.table} c
          WHERE c.tenant_id = ${space} AND c.document_id = a.document_id
            AND c.document_version = a.document_version
            AND c.chunk_index BETWEEN a.chunk_index - ${radius} AND a.chunk_index + ${radius}
         OFFSET 0
       ) c
       ORDER BY c.document_id, c.chunk_index`.execute(this.db);
    return rows.map((row) => ({
      documentId: row.document_id,
      documentVersion: row.document_version,
      chunkIndex: row.chunk_index,
      title: row.title,
      text: row.text,
      startOffset: row.start_offset,
      endOffset: row.end_offset,
    }));
  }

  /**
   * Every chunk of the space, with what BM25 and the scope read: a snapshot's rows, in the primary
   * key's order, as `postingsOf` lists a lexeme's chunks (lists then need no sort, and the next
   * snapshot renumbers the last one's in order: posting-lists.ts).
   */
  async spaceChunks(space: IndexSpace): Promise<SpaceChunk[]> {
    const rows = await this.db
      .selectFrom('chunks')
      .select([
        'document_id',
        'document_version',
        'chunk_index',
        'doc_len',
        'start_offset',
        'end_offset',
        'principals',
        'kb_ids',
        'tags',
        'uploaded_at',
        'metadata',
      ])
      .where('tenant_id', '=', space)
      .orderBy('document_id')
      .orderBy('document_version')
      .orderBy('chunk_index')
      .execute();
    return rows.map((row) => ({
      documentId: row.document_id,
      documentVersion: row.document_version,
      chunkIndex: row.chunk_index,
      length: row.doc_len,
      startOffset: row.start_offset,
      endOffset: row.end_offset,
      principals: row.principals,
      knowledgeBaseIds: row.kb_ids,
      tags: row.tags,
      uploadedAt: Number(row.uploaded_at),
      metadata: row.metadata,
    }));
  }

  /**
   * The postings of these lexemes in the space, read by the postings' primary key: a row per
   * lexeme, its chunks' keys and counts as two JSON arrays in the key's order (the index's, no
   * sort). At ×500 CISI a common lexeme has ~350,000 postings, and a row per posting cost the
   * service about twice Postgres' own time to parse.
   */
  async postingsOf(space: IndexSpace, lexemes: string[]): Promise<LexemePostings[]> {
    if (lexemes.length === 0) return [];
    const inKeyOrder = sql`ORDER BY document_id, document_version, chunk_index`;
    return this.db
      .selectFrom('postings')
      .select([
        'lexeme',
        sql<
          string[]
        >`json_agg(document_id || '#' || document_version || '#' || chunk_index ${inKeyOrder})`.as(
          'chunks',
        ),
        sql<number[]>`json_agg(tf ${inKeyOrder})`.as('tfs'),
      ])
      .where('tenant_id', '=', space)
      .where((eb) => eb('lexeme', '=', eb.fn.any(eb.val(lexemes))))
      .groupBy('lexeme')
      .execute();
  }

  /** The distinct lexemes the index's text search configuration makes of a text. */
  async analyze(text: string): Promise<string[]> {
    // A table function over to_tsvector: a sql template.
    const { rows } = await sql<{
      lexeme: string;
    }>`SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', ${text}))`.execute(this.db);
    return rows.map((row) => row.lexeme);
  }

  /** The title and text of these chunks, by `<document>#<version>#<chunk>`; unknown ones absent. */
  async texts(
    space: IndexSpace,
    chunks: ChunkRef[],
  ): Promise<Map<string, { title: string; text: string }>> {
    if (chunks.length === 0) return new Map();
    const { rows } = await sql<ChunkRefRow & { title: string; text: string }>`
      SELECT c.document_id, c.document_version, c.chunk_index, c.title, c.text
        ${this.chunksOfRecordset(space, chunks)}`.execute(this.db);
    return new Map(
      rows.map((row) => [
        `${row.document_id}#${row.document_version}#${row.chunk_index}`,
        { title: row.title, text: row.text },
      ]),
    );
  }
}

export const toRefRow = (ref: ChunkRef) => ({
  document_id: ref.documentId,
  document_version: ref.documentVersion,
  chunk_index: ref.chunkIndex,
});

export interface ChunkRow {
  document_id: string;
  document_version: number;
  chunk_index: number;
  title: string;
  text: string;
  start_offset: number;
  end_offset: number;
}

type ChunkRefRow = Pick<ChunkRow, 'document_id' | 'document_version' | 'chunk_index'>;
