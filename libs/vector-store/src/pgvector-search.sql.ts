import { type FilterColumns, filterToSql } from '@kb/database';
import { type CompiledQuery, type Kysely, sql } from 'kysely';

import {
  type MatchRow,
  toVectorLiteral,
  type VectorDB,
  type VectorTableName,
} from './pgvector-store.rows';
import type { VectorQuery } from './vector-store';

const FILTER_COLUMNS: FilterColumns = {
  documentId: 'document_id',
  tags: 'tags',
  uploadedAt: 'uploaded_at',
  metadata: 'metadata',
};

/**
 * The nearest chunks of a namespace: a `sql` template, since it orders by pgvector's distance
 * operator, and it is the statement `npm run bench` measures (ADR 29). `namespace = …` prunes to
 * the namespace's partition. The filter sits inside the index scan (iterative scans keep going
 * until k rows match); relaxed order means the outer query restores exact order.
 *
 * The query vector is bound once and read twice, as `$1`: a second copy of it (a template binds
 * each value it is given) cost ~0.05-0.1 ms of a ~1 ms query on CISI, sending and parsing a
 * 384-dimension vector again. It is the template's first value; the check below keeps it so.
 */
export function nearestStatement(
  db: Kysely<VectorDB>,
  table: VectorTableName,
  namespace: string,
  query: VectorQuery,
): CompiledQuery<MatchRow> {
  const vector = toVectorLiteral(query.vector);
  const kbs = query.knowledgeBaseIds?.length
    ? sql`AND kb_ids && ${query.knowledgeBaseIds}::text[]`
    : sql``;
  const acl = query.principals ? sql`AND principals && ${query.principals}::text[]` : sql``;
  const filter = filterToSql(query.filter, FILTER_COLUMNS);
  const texts = query.withText === false ? sql`'' AS title, '' AS text` : sql`title, text`;
  const statement = sql<MatchRow>`SELECT * FROM (
           SELECT document_id, document_version, chunk_index, ${texts}, start_offset, end_offset,
                  1 - (embedding <=> ${vector}::vector) AS score
             FROM ${sql.table(table)}
            WHERE namespace = ${namespace} ${kbs} ${acl} AND ${filter}
            ORDER BY embedding <=> ${sql.raw('$1')}::vector
            LIMIT ${query.topK}
         ) nearest ORDER BY score DESC, document_id, chunk_index`.compile(db);
  if (statement.parameters[0] !== vector) throw new Error('the query vector must be $1');
  return statement;
}
