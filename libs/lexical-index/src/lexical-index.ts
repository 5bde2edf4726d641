import type { DocumentAttributes, EditableAttributes, FilterNode } from '@kb/contracts';

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

/** A chunk to index, with its document's attributes for filters. */
export interface LexicalWrite extends LexicalRecord {
  attributes: DocumentAttributes;
}

export interface LexicalQuery {
  text: string;
  topK: number;
  /** Applied before ranking is cut to top-k. */
  filter?: FilterNode | undefined;
  /** Restrict to documents in any of these knowledge bases; empty or absent means all. */
  knowledgeBaseIds?: string[] | undefined;
  /** The caller's principals: only chunks whose document grants one of them. Absent: no ACL filter. */
  principals?: string[] | undefined;
}

export interface LexicalMatch extends LexicalRecord {
  /** Full-text rank; comparable within one query only. */
  score: number;
}

/**
 * The lexical (full-text) index port. Written by indexing-service beside the vectors, read by
 * query-service. Every call names the tenant.
 */
export interface LexicalIndex {
  upsert(tenantId: string, records: LexicalWrite[]): Promise<void>;
  search(tenantId: string, query: LexicalQuery): Promise<LexicalMatch[]>;
  /** Removes a document's rows, or only those of versions older than `olderThan`. */
  deleteDocument(tenantId: string, documentId: string, olderThan?: number): Promise<number>;
  /** Every document of the tenant with the versions it holds, by document id (orphan sweep). */
  documentVersions(tenantId: string): AsyncIterable<{ documentId: string; versions: number[] }>;
  /** Replaces a document's knowledge bases, tags and metadata on its chunks, in place. */
  setAttributes(
    tenantId: string,
    documentId: string,
    attributes: EditableAttributes,
  ): Promise<number>;
  /** Replaces who may read a document's chunks, in place. Returns the count. */
  setPrincipals(tenantId: string, documentId: string, principals: string[]): Promise<number>;
  countDocument(tenantId: string, documentId: string): Promise<number>;
  /** Chunks of the same document version within `radius` of each anchor (anchors included). */
  chunksAround(tenantId: string, anchors: ChunkRef[], radius: number): Promise<LexicalRecord[]>;
  /** Resolves when the index answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
