import type { SparseValues } from '@kb/lexical-index';

/** Pinecone takes at most this many non-zero values in one sparse vector (docs/adr/0057). */
export const MAX_SPARSE_NON_ZEROS = 1000;
/** A sparse index answers at most this many matches per query. */
export const MAX_SPARSE_TOP_K = 1000;

/**
 * The sparse vector within Pinecone's limit: past 1,000 non-zero values, the 1,000 largest are
 * kept (a chunk's rarest or most repeated lexemes; an RM3 query never has that many), in
 * ascending index order. Zero values are dropped: they score nothing and count against the limit.
 */
export function capSparse(sparse: SparseValues): SparseValues {
  const kept = sparse.indices
    .map((index, i) => ({ index, value: sparse.values[i]! }))
    .filter(({ value }) => value !== 0);
  if (kept.length === sparse.indices.length && kept.length <= MAX_SPARSE_NON_ZEROS) return sparse;
  const top =
    kept.length <= MAX_SPARSE_NON_ZEROS
      ? kept
      : kept
          .sort((a, b) => Math.abs(b.value) - Math.abs(a.value) || a.index - b.index)
          .slice(0, MAX_SPARSE_NON_ZEROS);
  top.sort((a, b) => a.index - b.index);
  return { indices: top.map((t) => t.index), values: top.map((t) => t.value) };
}
