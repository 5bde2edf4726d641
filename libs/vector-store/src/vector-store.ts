/** What the store keeps for one chunk. */
export interface VectorRecord {
  documentId: string;
  documentVersion: number;
  chunkIndex: number;
  vector: number[];
  title: string;
  text: string;
  startOffset: number;
  endOffset: number;
}

export interface VectorMatch extends Omit<VectorRecord, 'vector'> {
  /** Cosine similarity, higher is closer. */
  score: number;
}

export interface VectorQuery {
  vector: number[];
  topK: number;
}

/**
 * The vector-store port. A namespace isolates one tenant's vectors; every call names it,
 * so a query without a tenant does not compile.
 */
export interface VectorStore {
  /** Prepares indexes for vectors of this dimension (idempotent). */
  ensureReady(dimension: number): Promise<void>;
  /** Inserts or replaces records; the same record written twice leaves one copy. */
  upsert(namespace: string, records: VectorRecord[]): Promise<void>;
  query(namespace: string, query: VectorQuery): Promise<VectorMatch[]>;
  /** Removes a document's vectors, or only those of versions other than `keepVersion`. Returns how many went. */
  deleteDocument(namespace: string, documentId: string, keepVersion?: number): Promise<number>;
  countDocument(namespace: string, documentId: string): Promise<number>;
  /** Resolves when the backend answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Record id: `<document>#<version>#<chunk>`, so one document's ids share a prefix. */
export function vectorId(
  record: Pick<VectorRecord, 'documentId' | 'documentVersion' | 'chunkIndex'>,
): string {
  return `${record.documentId}#${record.documentVersion}#${record.chunkIndex}`;
}
