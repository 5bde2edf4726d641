import murmurhash from 'murmurhash';

// The constants from where they are defined (bm25-rank.ts says why).
import { BM25_B, BM25_K1 } from '../bm25-search.sql';
import type { TermVector } from '../lexical-index';
import type { ReferenceStatistics } from './reference-statistics';
import type { SparseEncoder, SparseValues } from './sparse-encoder';

/**
 * How many places the sparse space has: the largest prime below 10⁹. pgvector's `sparsevec`
 * takes at most 10⁹ dimensions (so 2³⁰ would not fit) and Pinecone any unsigned 32-bit index;
 * a prime spreads the hash's residues evenly. Declare `sparsevec(1000000000)`.
 */
export const SPARSE_DIMENSIONS = 999_999_937;

/**
 * BM25 as sparse vectors (sparse-encoder.ts) with fixed statistics (docs/adr/0056): a chunk's
 * value for a lexeme is Okapi's saturated, length-normalised tf against the reference's mean
 * length, the query's is its weight times the reference idf, and their dot product is the BM25
 * score `SpaceSnapshot.rank` gives with `LEXICAL_IDF=reference`. A lexeme's place is MurmurHash3
 * (x86, 32-bit, seed 0) of its UTF-8 bytes modulo SPARSE_DIMENSIONS, so any language can compute
 * it. Two lexemes sharing a place add their values there: a query lexeme shares its place with
 * one of a space's 10⁵ other lexemes with probability 10⁻⁴.
 */
export class Bm25SparseEncoder implements SparseEncoder {
  constructor(readonly reference: ReferenceStatistics) {}

  indexOf(lexeme: string): number {
    return murmurhash.v3(lexeme) % SPARSE_DIMENSIONS;
  }

  /** The reference idf of a lexeme (the query side's factor). */
  idf(lexeme: string): number {
    return this.reference.idf(lexeme);
  }

  document(terms: TermVector): SparseValues {
    const k1 = BM25_K1;
    const b = BM25_B;
    const norm = k1 * (1 - b + (b * terms.length) / this.reference.avgdl);
    const values = new Map<number, number>();
    for (const [lexeme, tf] of terms.terms) {
      if (!(tf > 0)) continue;
      const index = this.indexOf(lexeme);
      values.set(index, (values.get(index) ?? 0) + (tf * (k1 + 1)) / (tf + norm));
    }
    return sorted(values);
  }

  query(weights: ReadonlyMap<string, number>): SparseValues {
    const values = new Map<number, number>();
    for (const [lexeme, weight] of weights) {
      if (!(weight > 0)) continue;
      const index = this.indexOf(lexeme);
      values.set(index, (values.get(index) ?? 0) + weight * this.idf(lexeme));
    }
    return sorted(values);
  }
}

function sorted(values: Map<number, number>): SparseValues {
  const indices = [...values.keys()].sort((x, y) => x - y);
  return { indices, values: indices.map((index) => values.get(index)!) };
}
