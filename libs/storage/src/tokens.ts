/** Nest injection token of the blob store (S3), one per process. */
export const BLOB_STORE = Symbol('BLOB_STORE');
