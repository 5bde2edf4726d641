import { Bm25SparseEncoder } from './bm25-sparse-encoder';
import { REFERENCE_IDF } from './reference-idf.generated';
import { IdfTable } from './reference-statistics';

let shared: Bm25SparseEncoder | undefined;

/** The encoder over the committed reference table (read once, on first use). */
export function referenceEncoder(): Bm25SparseEncoder {
  shared ??= new Bm25SparseEncoder(
    new IdfTable(REFERENCE_IDF.buckets, REFERENCE_IDF.unknownIdf, REFERENCE_IDF.avgdl),
  );
  return shared;
}
