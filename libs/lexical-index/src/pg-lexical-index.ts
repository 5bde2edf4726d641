import type { EditableAttributes, IndexSpace, MetadataValue } from '@kb/contracts';
import { createPool, type FilterColumns, filterToSql, quoteIdent } from '@kb/database';
import type { Pool } from 'pg';

import { constraintToSql, literalSql } from './lexical-constraint.sql';
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
import { parseLexicalQuery } from './lexical-query.parser';
import { LEXICAL_SCHEMA } from './migrations';

/** BM25 parameters: Anserini's defaults (k1 = 0.9, b = 0.4), also used by the dataset README's baseline. */
export const BM25_K1 = 0.9;
export const BM25_B = 0.4;
const K1 = BM25_K1;
const B = BM25_B;
const FILTER_COLUMNS: FilterColumns = {
  documentId: 'c.document_id',
  tags: 'c.tags',
  uploadedAt: 'c.uploaded_at',
  metadata: 'c.metadata',
};

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

  async search(space: IndexSpace, query: LexicalQuery): Promise<LexicalMatch[]> {
    // Phrases, operators, exclusions and identifiers (lexical-query.parser.ts): BM25 scores the
    // terms that are not excluded; the constraint is checked with the scope, before the cut.
    const parsed = parseLexicalQuery(query.text);
    const params: unknown[] = [space, parsed.scoringText, query.topK];
    const kbs = query.knowledgeBaseIds?.length
      ? `c.kb_ids && $${params.push(query.knowledgeBaseIds)}::text[]`
      : 'TRUE';
    const acl = query.principals
      ? `c.principals && $${params.push(query.principals)}::text[]`
      : 'TRUE';
    const filter = filterToSql(query.filter, FILTER_COLUMNS, params);
    const matches = parsed.constraint ? constraintToSql(parsed.constraint, params) : 'TRUE';
    // Identifiers typed among plain words: each one a chunk contains whole adds the best BM25
    // score of the query, so it ranks above every chunk that only shares the identifier's parts.
    // That needs every scored chunk's row, so the cut to top-k waits for it (docs/adr/0028).
    const preferred = parsed.preferred.length
      ? parsed.preferred.map((text) => `${literalSql(text, params)}::int`).join(' + ')
      : null;
    const scoped = kbs !== 'TRUE' || filter !== 'TRUE' || matches !== 'TRUE' || preferred !== null;
    const score = preferred
      ? `scored.score + (${preferred}) * (SELECT max(score) FROM scored)`
      : 'scored.score';
    // The statistics (N, avgdl, df) count only the chunks the caller may read (docs/adr/0019):
    // counted over the whole space, a term's idf told a reader how many chunks they cannot read
    // contain it. So every posting of the query's terms is joined with the chunks the caller may
    // read before anything is counted; knowledge bases and the filter narrow the results
    // only, not the statistics (whatever they leave out, the caller may read anyway).
    // Postings are read by (tenant, term) through the primary key. A scope (knowledge bases,
    // filter) is checked on the scored chunks' rows before the cut to top-k, so k counts matching
    // chunks only. Unscoped, the cut comes before the join.
    // Right after a bulk ingest, before autovacuum analyzes the new rows, the planner believes the
    // tenant has one chunk: the CTEs are MATERIALIZED so nothing is recomputed per row, and each
    // scored chunk is read by its primary key (LATERAL … LIMIT 1 keeps that lookup parameterized)
    // instead of scanning the tenant's chunks once per hit (1.6 s instead of 14 ms, measured).
    // The chunks the caller may read are found in one pass over the space's chunks, which also
    // gives N and avgdl; postings join them by hash. (A primary-key lookup per posting cost two
    // buffers each: 6,371 buffers and twice the time for a CISI query, docs/adr/0029.) Both reads
    // are index-only (`chunks_readable`, the postings' key INCLUDEs tf and doc_len). `scored` is
    // ordered as the answer is, and the planner keeps that order through the nested loop, so
    // the chunk rows are read for the best-scored chunks only, until k pass the scope (before,
    // every scored chunk's row was read and the whole set sorted: 890 lookups for a CISI query).
    // Arithmetic in float8 (a literal like 0.9 alone is numeric, slower and cast back).
    const readable =
      acl === 'TRUE'
        ? ''
        : `JOIN readable r ON r.document_id = p.document_id
             AND r.document_version = p.document_version AND r.chunk_index = p.chunk_index`;
    const statsOver = acl === 'TRUE' ? `${this.table} c WHERE c.tenant_id = $1` : 'readable';
    // Each term's weight: 1 (plain BM25), or with pseudo-relevance feedback (RM3) λ shared by the
    // query's terms plus each feedback term's own weight.
    const expansion = query.expansion;
    const queryTermWeight = expansion
      ? `$${params.push(expansion.queryWeight)}::float8 / greatest((SELECT count(*) FROM query_terms), 1)`
      : '1';
    const feedbackTerms = expansion
      ? `UNION ALL SELECT * FROM unnest($${params.push(expansion.terms.map((t) => t.lexeme))}::text[],
                                       $${params.push(expansion.terms.map((t) => t.weight))}::float8[])`
      : '';
    // Reading and sending 100 chunk texts was ~3.5 of the ~10 ms of a CISI query (docs/adr/0029).
    const texts = query.withText === false ? `'' AS title, '' AS text` : 'c.title, c.text';
    const { rows } = await this.pool.query<Row>(
      `WITH query_terms AS MATERIALIZED (
         SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', $2))
       ), weights AS MATERIALIZED (
         SELECT lexeme, sum(w)::float8 AS w
           FROM (SELECT lexeme, ${queryTermWeight} AS w FROM query_terms ${feedbackTerms}) t
          GROUP BY lexeme
       ), terms AS (
         SELECT coalesce(array_agg(lexeme), '{}') AS lexemes FROM weights
       ), readable AS MATERIALIZED (
         SELECT c.document_id, c.document_version, c.chunk_index, c.doc_len
           FROM ${this.table} c WHERE c.tenant_id = $1 AND ${acl}
       ), stats AS MATERIALIZED (
         SELECT count(*)::float8 AS n, greatest(avg(doc_len), 1)::float8 AS avgdl
           FROM ${statsOver}
       ), matched AS MATERIALIZED (
         SELECT p.* FROM ${this.postings} p ${readable}
          WHERE p.tenant_id = $1 AND p.lexeme = ANY((SELECT lexemes FROM terms)::text[])
       ), df AS MATERIALIZED (
         SELECT lexeme, count(*)::float8 AS df FROM matched GROUP BY lexeme
       ), scored AS MATERIALIZED (
         SELECT p.document_id, p.document_version, p.chunk_index,
                sum(wt.w * ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5))
                    * (p.tf * ${K1 + 1}::float8)
                    / (p.tf + ${K1}::float8 * (1 - ${B}::float8 + ${B}::float8 * p.doc_len / s.avgdl))) AS score
           FROM matched p
           JOIN df ON df.lexeme = p.lexeme
           JOIN weights wt ON wt.lexeme = p.lexeme
           CROSS JOIN stats s
          GROUP BY p.document_id, p.document_version, p.chunk_index
          ORDER BY score DESC, p.document_id, p.chunk_index
          ${scoped ? '' : 'LIMIT $3'}
       )
       SELECT c.document_id, c.document_version, c.chunk_index, ${texts}, c.start_offset,
              c.end_offset, ${score} AS score
         FROM scored
        CROSS JOIN LATERAL (
          SELECT * FROM ${this.table} c
           WHERE c.tenant_id = $1 AND c.document_id = scored.document_id
             AND c.document_version = scored.document_version AND c.chunk_index = scored.chunk_index
             AND ${kbs} AND ${acl} AND ${filter} AND ${matches}
           LIMIT 1
        ) c
        ORDER BY ${score} DESC, scored.document_id, scored.chunk_index
        LIMIT $3`,
      params,
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

  async termVectors(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, TermVector>> {
    if (chunks.length === 0) return new Map();
    const { rows } = await this.pool.query<{
      document_id: string;
      document_version: number;
      chunk_index: number;
      lexeme: string;
      tf: number;
      doc_len: number;
    }>(
      `SELECT p.document_id, p.document_version, p.chunk_index, p.lexeme, p.tf, p.doc_len
         FROM jsonb_to_recordset($2::jsonb) AS a(document_id text, document_version integer, chunk_index integer)
         JOIN ${this.postings} p ON p.tenant_id = $1 AND p.document_id = a.document_id
          AND p.document_version = a.document_version AND p.chunk_index = a.chunk_index`,
      [space, JSON.stringify(chunks.map(toRefRow))],
    );
    const vectors = new Map<string, TermVector>();
    for (const row of rows) {
      const key = `${row.document_id}#${row.document_version}#${row.chunk_index}`;
      const vector = vectors.get(key) ?? { length: row.doc_len, terms: new Map<string, number>() };
      vector.terms.set(row.lexeme, row.tf);
      vectors.set(key, vector);
    }
    return vectors;
  }

  async locations(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkLocation>> {
    if (chunks.length === 0) return new Map();
    const { rows } = await this.pool.query<{
      document_id: string;
      document_version: number;
      chunk_index: number;
      page: number | null;
      heading_path: string[];
    }>(
      // One primary-key lookup per chunk (LATERAL … LIMIT 1 keeps it parameterized): joined
      // plainly, the planner takes the recordset for 100 rows and hashes a scan of the space's
      // every chunk row (350 buffers for a page of 10 in a CISI tenant, docs/adr/0029).
      `SELECT c.document_id, c.document_version, c.chunk_index, c.page, c.heading_path
         ${this.chunksOfRecordset()}`,
      [space, JSON.stringify(chunks.map(toRefRow))],
    );
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
   * The chunk rows `c` of the refs in parameter $2 (a JSON recordset) in space $1, one
   * primary-key lookup each: `locations` and `matching` read them so.
   */
  private chunksOfRecordset(): string {
    return `FROM jsonb_to_recordset($2::jsonb) AS a(document_id text, document_version integer, chunk_index integer)
        CROSS JOIN LATERAL (
          SELECT * FROM ${this.table} c
           WHERE c.tenant_id = $1 AND c.document_id = a.document_id
             AND c.document_version = a.document_version AND c.chunk_index = a.chunk_index
           LIMIT 1
        ) c`;
  }

  async matching(space: IndexSpace, query: string, chunks: ChunkRef[]): Promise<Set<string>> {
    const constraint = parseLexicalQuery(query).constraint;
    const keys = chunks.map((c) => `${c.documentId}#${c.documentVersion}#${c.chunkIndex}`);
    if (!constraint || chunks.length === 0) return new Set(keys);
    const params: unknown[] = [space, JSON.stringify(chunks.map(toRefRow))];
    const matches = constraintToSql(constraint, params);
    const { rows } = await this.pool.query<ChunkRefRow>(
      `SELECT c.document_id, c.document_version, c.chunk_index
         ${this.chunksOfRecordset()}
        WHERE ${matches}`,
      params,
    );
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
    const { rows } = await this.pool.query<Omit<Row, 'score'>>(
      // A range of the primary key per anchor (OFFSET 0 keeps the subquery parameterized, as in
      // `locations`).
      `SELECT DISTINCT c.document_id, c.document_version, c.chunk_index, c.title, c.text, c.start_offset, c.end_offset
         FROM jsonb_to_recordset($2::jsonb) AS a(document_id text, document_version integer, chunk_index integer)
        CROSS JOIN LATERAL (
          SELECT * FROM ${this.table} c
           WHERE c.tenant_id = $1 AND c.document_id = a.document_id
             AND c.document_version = a.document_version
             AND c.chunk_index BETWEEN a.chunk_index - $3 AND a.chunk_index + $3
          OFFSET 0
        ) c
        ORDER BY c.document_id, c.chunk_index`,
      [space, JSON.stringify(anchors.map(toRefRow)), radius],
    );
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

  /** Every chunk of the space, with what BM25 and the scope read: a snapshot's rows. */
  async spaceChunks(space: IndexSpace): Promise<SpaceChunk[]> {
    const { rows } = await this.pool.query<{
      document_id: string;
      document_version: number;
      chunk_index: number;
      doc_len: number;
      start_offset: number;
      end_offset: number;
      principals: string[];
      kb_ids: string[];
      tags: string[];
      uploaded_at: string;
      metadata: Record<string, MetadataValue>;
    }>(
      `SELECT document_id, document_version, chunk_index, doc_len, start_offset, end_offset,
              principals, kb_ids, tags, uploaded_at, metadata
         FROM ${this.table} WHERE tenant_id = $1`,
      [space],
    );
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

  /** The postings of these lexemes in the space, read by the postings' primary key. */
  async postingsOf(space: IndexSpace, lexemes: string[]): Promise<Posting[]> {
    if (lexemes.length === 0) return [];
    // The chunk's key is built by Postgres: a cold CISI ×10 query reads ~30,000 postings.
    const { rows } = await this.pool.query<Posting>(
      `SELECT lexeme, document_id || '#' || document_version || '#' || chunk_index AS chunk, tf
         FROM ${this.postings} WHERE tenant_id = $1 AND lexeme = ANY($2::text[])`,
      [space, lexemes],
    );
    return rows;
  }

  /** The distinct lexemes the index's text search configuration makes of a text. */
  async analyze(text: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ lexeme: string }>(
      `SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', $1))`,
      [text],
    );
    return rows.map((row) => row.lexeme);
  }

  /** The title and text of these chunks, by `<document>#<version>#<chunk>`; unknown ones absent. */
  async texts(
    space: IndexSpace,
    chunks: ChunkRef[],
  ): Promise<Map<string, { title: string; text: string }>> {
    if (chunks.length === 0) return new Map();
    const { rows } = await this.pool.query<ChunkRefRow & { title: string; text: string }>(
      `SELECT c.document_id, c.document_version, c.chunk_index, c.title, c.text
         ${this.chunksOfRecordset()}`,
      [space, JSON.stringify(chunks.map(toRefRow))],
    );
    return new Map(
      rows.map((row) => [
        `${row.document_id}#${row.document_version}#${row.chunk_index}`,
        { title: row.title, text: row.text },
      ]),
    );
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

const toRefRow = (ref: ChunkRef) => ({
  document_id: ref.documentId,
  document_version: ref.documentVersion,
  chunk_index: ref.chunkIndex,
});

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

type ChunkRefRow = Pick<Row, 'document_id' | 'document_version' | 'chunk_index'>;
