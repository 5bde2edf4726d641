import type { IndexSpace } from '@kb/contracts';
import { type FilterColumns, filterToSql, queryOn, withAbortableClient } from '@kb/database';
import { type Kysely, sql } from 'kysely';
import type { Pool } from 'pg';

import type { DB } from './db.generated';
import { constraintToSql, literalSql } from './lexical-constraint.sql';
import type { LexicalMatch, LexicalQuery } from './lexical-index';
import { parseLexicalQuery } from './lexical-query.parser';
import type { ChunkRow } from './pg-chunk-reads';

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

type Row = ChunkRow & { score: number };

/**
 * The BM25 search of `PgLexicalIndex` (its class comment says how it scores) over the chunks and
 * postings tables of one schema. A `sql` template on the typed database: BM25 over postings in
 * materialized CTEs is what the builder would only obscure, and it is the statement
 * `npm run bench` measures (ADR 29).
 */
export async function bm25Search(
  db: Kysely<DB>,
  pool: Pool,
  schema: string,
  space: IndexSpace,
  query: LexicalQuery,
): Promise<LexicalMatch[]> {
  const chunks = sql.table(`${schema}.chunks`);
  const postings = sql.table(`${schema}.postings`);
  // Phrases, operators, exclusions and identifiers (lexical-query.parser.ts): BM25 scores the
  // terms that are not excluded; the constraint is checked with the scope, before the cut.
  const parsed = parseLexicalQuery(query.text);
  const kbs = query.knowledgeBaseIds?.length
    ? sql`c.kb_ids && ${query.knowledgeBaseIds}::text[]`
    : undefined;
  const acl = query.principals ? sql`c.principals && ${query.principals}::text[]` : undefined;
  const filter = query.filter ? filterToSql(query.filter, FILTER_COLUMNS) : undefined;
  const matches = parsed.constraint ? constraintToSql(parsed.constraint) : undefined;
  // Identifiers typed among plain words: each one a chunk contains whole adds the best BM25
  // score of the query, so it ranks above every chunk that only shares the identifier's parts.
  // That needs every scored chunk's row, so the cut to top-k waits for it (docs/adr/0028).
  const preferred = parsed.preferred.length
    ? sql.join(
        parsed.preferred.map((text) => sql`${literalSql(text)}::int`),
        sql` + `,
      )
    : undefined;
  const scoped = Boolean(kbs ?? filter ?? matches ?? preferred);
  const score = preferred
    ? sql`scored.score + (${preferred}) * (SELECT max(score) FROM scored)`
    : sql`scored.score`;
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
  const readable = acl
    ? sql`JOIN readable r ON r.document_id = p.document_id
           AND r.document_version = p.document_version AND r.chunk_index = p.chunk_index`
    : sql``;
  const statsOver = acl ? sql`readable` : sql`${chunks} c WHERE c.tenant_id = ${space}`;
  // Each term's weight: 1 (plain BM25), or with pseudo-relevance feedback (RM3) λ shared by the
  // query's terms plus each feedback term's own weight.
  const expansion = query.expansion;
  const queryTermWeight = expansion
    ? sql`${expansion.queryWeight}::float8 / greatest((SELECT count(*) FROM query_terms), 1)`
    : sql`1`;
  const feedbackTerms = expansion
    ? sql`UNION ALL SELECT * FROM unnest(${expansion.terms.map((t) => t.lexeme)}::text[],
                                     ${expansion.terms.map((t) => t.weight)}::float8[])`
    : sql``;
  // Reading and sending 100 chunk texts was ~3.5 of the ~10 ms of a CISI query (docs/adr/0029).
  const texts = query.withText === false ? sql`'' AS title, '' AS text` : sql`c.title, c.text`;
  const TRUE = sql`TRUE`;
  const statement = sql<Row>`WITH query_terms AS MATERIALIZED (
       SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', ${parsed.scoringText}))
     ), weights AS MATERIALIZED (
       SELECT lexeme, sum(w)::float8 AS w
         FROM (SELECT lexeme, ${queryTermWeight} AS w FROM query_terms ${feedbackTerms}) t
        GROUP BY lexeme
     ), terms AS (
       SELECT coalesce(array_agg(lexeme), '{}') AS lexemes FROM weights
     ), readable AS MATERIALIZED (
       SELECT c.document_id, c.document_version, c.chunk_index, c.doc_len
         FROM ${chunks} c WHERE c.tenant_id = ${space} AND ${acl ?? TRUE}
     ), stats AS MATERIALIZED (
       SELECT count(*)::float8 AS n, greatest(avg(doc_len), 1)::float8 AS avgdl
         FROM ${statsOver}
     ), matched AS MATERIALIZED (
       SELECT p.* FROM ${postings} p ${readable}
        WHERE p.tenant_id = ${space} AND p.lexeme = ANY((SELECT lexemes FROM terms)::text[])
     ), df AS MATERIALIZED (
       SELECT lexeme, count(*)::float8 AS df FROM matched GROUP BY lexeme
     ), scored AS MATERIALIZED (
       SELECT p.document_id, p.document_version, p.chunk_index,
              sum(wt.w * ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5))
                  * (p.tf * ${sql.lit(K1 + 1)}::float8)
                  / (p.tf + ${sql.lit(K1)}::float8 * (1 - ${sql.lit(B)}::float8 + ${sql.lit(B)}::float8 * p.doc_len / s.avgdl))) AS score
         FROM matched p
         JOIN df ON df.lexeme = p.lexeme
         JOIN weights wt ON wt.lexeme = p.lexeme
         CROSS JOIN stats s
        GROUP BY p.document_id, p.document_version, p.chunk_index
        ORDER BY score DESC, p.document_id, p.chunk_index
        ${scoped ? sql`` : sql`LIMIT ${query.topK}`}
     )
     SELECT c.document_id, c.document_version, c.chunk_index, ${texts}, c.start_offset,
            c.end_offset, ${score} AS score
       FROM scored
      CROSS JOIN LATERAL (
        SELECT * FROM ${chunks} c
         WHERE c.tenant_id = ${space} AND c.document_id = scored.document_id
           AND c.document_version = scored.document_version AND c.chunk_index = scored.chunk_index
           AND ${kbs ?? TRUE} AND ${acl ?? TRUE} AND ${filter ?? TRUE} AND ${matches ?? TRUE}
         LIMIT 1
      ) c
      ORDER BY ${score} DESC, scored.document_id, scored.chunk_index
      LIMIT ${query.topK}`.compile(db);
  // The search's remaining budget cancels the statement (docs/adr/0042).
  const rows = await withAbortableClient(
    pool,
    (client) => queryOn(client, statement),
    query.signal,
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
