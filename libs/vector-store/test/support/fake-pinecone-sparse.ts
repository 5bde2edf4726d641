/**
 * FAKE Pinecone: the sparse-vector rules the fake data plane (fake-pinecone.ts) enforces, as
 * Pinecone documents them (docs/adr/0057 has the sources):
 *
 * - sparse values are two arrays, `indices` (uint32) and `values` (float32), of the same length;
 * - a sparse vector holds at most 1,000 non-zero values;
 * - a sparse index (`vector_type: sparse`) uses the `dotproduct` metric and holds sparse values
 *   only; its queries take a sparse vector (no dense one), `topK` at most 1,000, and records the
 *   query scores 0 are left out of the answer;
 * - in a dense index, a record with sparse values must carry dense values too, and only a
 *   `dotproduct` index can be queried with a sparse vector (other metrics accept the upsert and
 *   refuse the query).
 *
 * Each check returns the reason Pinecone refuses the request (HTTP 400), or undefined.
 */

export interface SparseValues {
  indices: number[];
  values: number[];
}

export type FakeIndexKind =
  { vectorType: 'dense'; metric: 'cosine' | 'dotproduct' } | { vectorType: 'sparse' };

/** The documented cap on non-zero values in one sparse vector (records and queries). */
export const MAX_SPARSE_NON_ZEROS = 1000;
/** A sparse index answers at most this many matches per query. */
export const MAX_SPARSE_TOP_K = 1000;
const MAX_UINT32 = 2 ** 32 - 1;

export function invalidSparseValues(sparse: SparseValues, what: string): string | undefined {
  if (!Array.isArray(sparse.indices) || !Array.isArray(sparse.values)) {
    return `${what}: sparse values need both indices and values`;
  }
  if (sparse.indices.length !== sparse.values.length) {
    return `${what}: sparse values have ${sparse.indices.length} indices and ${sparse.values.length} values; they must have the same length`;
  }
  if (sparse.indices.length > MAX_SPARSE_NON_ZEROS) {
    return `${what}: ${sparse.indices.length} non-zero sparse values; at most ${MAX_SPARSE_NON_ZEROS}`;
  }
  const bad = sparse.indices.find((i) => !Number.isInteger(i) || i < 0 || i > MAX_UINT32);
  if (bad !== undefined) return `${what}: sparse index ${bad} is not a uint32`;
  return undefined;
}

export function invalidRecord(
  kind: FakeIndexKind,
  record: { id: string; values?: number[]; sparseValues?: SparseValues | undefined },
): string | undefined {
  const what = `vector ${record.id}`;
  if (record.sparseValues) {
    const refused = invalidSparseValues(record.sparseValues, what);
    if (refused) return refused;
  }
  if (kind.vectorType === 'sparse') {
    if (record.values?.length) return `${what}: a sparse index takes no dense values`;
    if (!record.sparseValues?.indices.length) return `${what}: a sparse index needs sparse values`;
    return undefined;
  }
  if (!record.values?.length) {
    return `${what}: records with sparse values must also contain dense values`;
  }
  return undefined;
}

export function invalidQuery(
  kind: FakeIndexKind,
  body: Record<string, unknown>,
): string | undefined {
  const sparse = body['sparseVector'] as SparseValues | undefined;
  const dense = body['vector'] as number[] | undefined;
  if (sparse) {
    const refused = invalidSparseValues(sparse, 'query');
    if (refused) return refused;
  }
  if (kind.vectorType === 'sparse') {
    if (dense?.length) return 'query: a sparse index is queried with a sparse vector only';
    if (!sparse?.indices.length) return 'query: a sparse index needs a sparse vector';
    if ((body['topK'] as number) > MAX_SPARSE_TOP_K) {
      return `query: topK ${String(body['topK'])} exceeds ${MAX_SPARSE_TOP_K} for a sparse index`;
    }
    return undefined;
  }
  if (!dense?.length) return 'query: a dense index needs a vector';
  if (sparse && kind.metric !== 'dotproduct') {
    return 'Index configuration does not support sparse values';
  }
  return undefined;
}

/** Sum of the products of the values two sparse vectors hold at the same index. */
export function sparseDot(a: SparseValues | undefined, b: SparseValues | undefined): number {
  if (!a || !b) return 0;
  const at = new Map(b.indices.map((index, i) => [index, b.values[i]!]));
  let sum = 0;
  a.indices.forEach((index, i) => (sum += a.values[i]! * (at.get(index) ?? 0)));
  return sum;
}

/** Pinecone keeps values as float32. */
export function toFloat32(values: number[]): number[] {
  return values.map((v) => Math.fround(v));
}
