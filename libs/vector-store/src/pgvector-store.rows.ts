import type { DB } from './db.generated';
import type { VectorMatch } from './vector-store';

/**
 * Every dimension's table (`kb_vectors_<dimension>`) is built by the same migrations, so the types
 * generated from the 384 one (test/schema.int-spec.ts) are the columns of each.
 */
export type VectorTableName = `kb_vectors_${number}`;
export type VectorDB = Record<VectorTableName, DB['kb_vectors_384']>;

/** A row a vector query returns. */
export interface MatchRow {
  document_id: string;
  document_version: number;
  chunk_index: number;
  title: string;
  text: string;
  start_offset: number;
  end_offset: number;
  score: number;
}

export function toMatch(row: MatchRow): VectorMatch {
  return {
    documentId: row.document_id,
    documentVersion: row.document_version,
    chunkIndex: row.chunk_index,
    title: row.title,
    text: row.text,
    startOffset: row.start_offset,
    endOffset: row.end_offset,
    score: Number(row.score),
  };
}

/** A vector in pgvector's text form (`[1,2,3]`); a non-finite value throws. */
export function toVectorLiteral(vector: number[]): string {
  for (const value of vector) {
    if (!Number.isFinite(value)) throw new Error('vector contains a non-finite value');
  }
  return `[${vector.join(',')}]`;
}
