import type { DocumentAttributes, EditableAttributes, FilterNode, IndexSpace } from '@kb/contracts';

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
  /** The document's knowledge bases, tags, metadata and upload time: what filters see. */
  attributes: DocumentAttributes;
}

export interface VectorMatch extends Omit<VectorRecord, 'vector' | 'attributes'> {
  /** Cosine similarity, higher is closer. */
  score: number;
}

export interface VectorQuery {
  vector: number[];
  topK: number;
  /** Applied inside the nearest-neighbour search, so top-k counts matching chunks only. */
  filter?: FilterNode | undefined;
  /** Restrict to chunks of documents in any of these knowledge bases; empty or absent means all. */
  knowledgeBaseIds?: string[] | undefined;
  /** The caller's principals: only chunks whose document grants one of them. Absent: no ACL filter. */
  principals?: string[] | undefined;
  /**
   * False: matches may come back with empty `title` and `text` (the caller reads them elsewhere,
   * docs/adr/0029, twelfth pass); a store that holds them inline then neither reads nor sends
   * them. Default true.
   */
  withText?: boolean | undefined;
  /**
   * The search's remaining budget (docs/adr/0042): once it aborts, the query rejects with its
   * reason and the store stops the work where it can (pgvector cancels the statement).
   */
  signal?: AbortSignal | undefined;
}

export type ChunkKey = Pick<VectorRecord, 'documentId' | 'documentVersion' | 'chunkIndex'>;

/** A document the store holds chunks of, and which versions: what the orphan sweep compares. */
export interface DocumentVersions {
  documentId: string;
  /** Ascending. */
  versions: number[];
}

/**
 * The vector-store port. A namespace isolates one index space's vectors (a tenant's own, or one
 * of its pipelines'); every call names the space, so a query without a tenant does not compile.
 */
export interface VectorStore {
  /** Prepares indexes for vectors of this dimension (idempotent). */
  ensureReady(dimension: number): Promise<void>;
  /** Inserts or replaces records; the same record written twice leaves one copy. */
  upsert(space: IndexSpace, records: VectorRecord[]): Promise<void>;
  query(space: IndexSpace, query: VectorQuery): Promise<VectorMatch[]>;
  /** The stored vectors of these chunks, by `vectorId`; unknown chunks are absent. */
  fetchVectors(space: IndexSpace, chunks: ChunkKey[]): Promise<Map<string, number[]>>;
  /** Replaces who may read a document's chunks, in place (no re-embedding). Returns the count. */
  setPrincipals(space: IndexSpace, documentId: string, principals: string[]): Promise<number>;
  /**
   * Replaces a document's knowledge bases, tags and metadata on its chunks, in place. A store that
   * can only rewrite whole records (Pinecone) writes `principals` (the document's ACL as
   * indexing-service recorded it) rather than the ones it read back, which an eventually
   * consistent read may give from before the last ACL change; stores that update columns ignore it.
   */
  setAttributes(
    space: IndexSpace,
    documentId: string,
    attributes: EditableAttributes,
    principals?: string[],
  ): Promise<number>;
  /**
   * Removes a document's vectors, or only those of versions older than `olderThan` (never a newer
   * version, which a concurrent write may be putting in). Returns how many went.
   */
  deleteDocument(space: IndexSpace, documentId: string, olderThan?: number): Promise<number>;
  /**
   * Removes every vector of these documents (all versions) in set-based calls: emptying a
   * knowledge base (docs/adr/0024). Idempotent; returns how many went.
   */
  deleteDocuments(space: IndexSpace, documentIds: string[]): Promise<number>;
  countDocument(space: IndexSpace, documentId: string): Promise<number>;
  /** Whether `ensureReady` has prepared the store (pgvector: it knows its table). */
  isReady(): boolean;
  /** Every document of the space with the versions it holds, by document id. */
  documentVersions(space: IndexSpace): AsyncIterable<DocumentVersions>;
  /** Resolves when the backend answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Record id: `<document>#<version>#<chunk>`, so one document's ids share a prefix. */
export function vectorId(record: ChunkKey): string {
  return `${record.documentId}#${record.documentVersion}#${record.chunkIndex}`;
}
