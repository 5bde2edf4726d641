import type { TermVector } from '../lexical-index';

/**
 * A sparse vector as Pinecone's sparse values and pgvector's `sparsevec` take it: ascending,
 * distinct indices, one value each.
 */
export interface SparseValues {
  indices: number[];
  values: number[];
}

/**
 * BM25 as sparse vectors (issue 40, design a): the chunk's side at index time, the query's side
 * at search time, and their dot product is the chunk's score for the query. Neither side reads
 * other chunks (corpus statistics come from a fixed reference), so a score says nothing about
 * chunks the caller cannot read (docs/adr/0019), and every backend that takes sparse vectors
 * ranks the same way.
 */
export interface SparseEncoder {
  /** Where a lexeme sits in the sparse space: the same index on both sides. */
  indexOf(lexeme: string): number;
  /** The chunk's side: each lexeme's saturated, length-normalised term frequency. */
  document(terms: TermVector): SparseValues;
  /** The query's side: each lexeme's weight (1, or RM3's) times its inverse document frequency. */
  query(weights: ReadonlyMap<string, number>): SparseValues;
}
