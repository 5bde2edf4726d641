/** One chunk as the lexical index keeps it. */
export interface LexicalRecord {
  documentId: string;
  documentVersion: number;
  chunkIndex: number;
  title: string;
  text: string;
  startOffset: number;
  endOffset: number;
}

export type ChunkRef = Pick<LexicalRecord, 'documentId' | 'documentVersion' | 'chunkIndex'>;

export interface LexicalMatch extends LexicalRecord {
  /** Full-text rank; comparable within one query only. */
  score: number;
}

/**
 * The lexical (full-text) index port. Written by indexing-service beside the vectors, read by
 * query-service. Every call names the tenant.
 */
export interface LexicalIndex {
  upsert(tenantId: string, records: LexicalRecord[]): Promise<void>;
  search(tenantId: string, query: string, topK: number): Promise<LexicalMatch[]>;
  deleteDocument(tenantId: string, documentId: string, keepVersion?: number): Promise<number>;
  countDocument(tenantId: string, documentId: string): Promise<number>;
  /** Chunks of the same document version within `radius` of each anchor (anchors included). */
  chunksAround(tenantId: string, anchors: ChunkRef[], radius: number): Promise<LexicalRecord[]>;
  /** Resolves when the index answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
