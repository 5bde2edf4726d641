import type {
  DocumentAttributes,
  EditableAttributes,
  FilterNode,
  IndexSpace,
  MetadataValue,
} from '@kb/contracts';

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

/** What a chunk says: its document's title and its own text. */
export type ChunkText = Pick<LexicalRecord, 'title' | 'text'>;

/** Where a chunk sits in its document, as the parser found it. */
export interface ChunkLocation {
  /** The page the chunk starts on (paged formats such as PDF); absent otherwise. */
  page?: number | undefined;
  /** The Markdown headings in force where the chunk starts, outermost first. */
  headingPath?: string[] | undefined;
}

/** A chunk to index, with its document's attributes for filters and its location. */
export interface LexicalWrite extends LexicalRecord, ChunkLocation {
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
  /**
   * Pseudo-relevance feedback (RM3, docs/adr/0028): BM25 then scores the query's own terms with
   * `queryWeight` shared equally among them, plus the feedback terms with their weights. Absent:
   * every query term weighs 1 (plain BM25). The query text still gives the constraint (phrases,
   * operators, identifiers).
   */
  expansion?: QueryExpansion | undefined;
  /**
   * One holder passed to both BM25 passes of one search (first, then RM3's with `expansion`): an
   * index that ranks in memory keeps what the first pass scored in it, so the second adds only the
   * feedback terms' shares (docs/adr/0058). Same scores as without it; other indexes ignore it.
   */
  passMemo?: LexicalPassMemo | undefined;
  /**
   * False: matches come back with empty `title` and `text`, for a ranking whose texts are not
   * shown (the first pass before pseudo-relevance feedback): the texts are neither read from
   * storage nor sent. Default true.
   */
  withText?: boolean | undefined;
  /**
   * The search's remaining budget (docs/adr/0042): once it aborts, the search rejects with its
   * reason, and a search running in Postgres has its statement cancelled.
   */
  signal?: AbortSignal | undefined;
}

/** What a first BM25 pass left for the second (`LexicalQuery.passMemo`): opaque to the caller. */
export interface LexicalPassMemo {
  held?: unknown;
  /** Set by the second pass: whether it started from the first's scores (or ranked in full). */
  reused?: boolean;
}

/** Terms pseudo-relevance feedback adds to a query: lexemes as the index stores them. */
export interface QueryExpansion {
  /** λ: the share of the query's own terms. */
  queryWeight: number;
  /** Feedback terms and their weights; a term of the query listed here adds to its weight. */
  terms: Array<{ lexeme: string; weight: number }>;
}

/** A chunk's indexed terms: lexeme → count, and its length in lexemes (BM25's document length). */
export interface TermVector {
  length: number;
  terms: Map<string, number>;
}

/** A chunk as a snapshot of its space holds it (snapshot-lexical-index.ts): no text. */
export interface SpaceChunk extends ChunkRef {
  /** Its length in lexemes (BM25's document length). */
  length: number;
  startOffset: number;
  endOffset: number;
  /** Who may read it. */
  principals: string[];
  knowledgeBaseIds: string[];
  /** What filters read (document id aside). */
  tags: string[];
  uploadedAt: number;
  metadata: Record<string, MetadataValue>;
}

/**
 * One lexeme's postings in a space: the chunks holding it (by `<document>#<version>#<chunk>`) and
 * its count in each, in the same order.
 */
export interface LexemePostings {
  lexeme: string;
  chunks: string[];
  tfs: number[];
}

export interface LexicalMatch extends LexicalRecord {
  /**
   * Full-text rank (BM25 over the caller's readable chunks); comparable within one query only.
   * query-service does not expose it raw (docs/adr/0019).
   */
  score: number;
}

/**
 * The lexical (full-text) index port. Written by indexing-service beside the vectors, read by
 * query-service. Every call names the index space (a tenant's own, or one of its pipelines'), so
 * a query without a tenant does not compile. BM25 statistics (chunk count, mean length, document
 * frequencies) are per space and count only the chunks the caller's principals may read, so a
 * score says nothing about chunks the caller cannot see (docs/adr/0019).
 */
export interface LexicalIndex {
  upsert(space: IndexSpace, records: LexicalWrite[]): Promise<void>;
  search(space: IndexSpace, query: LexicalQuery): Promise<LexicalMatch[]>;
  /** Removes a document's rows, or only those of versions older than `olderThan`. */
  deleteDocument(space: IndexSpace, documentId: string, olderThan?: number): Promise<number>;
  /**
   * Removes every row of these documents (all versions) set-based: emptying a knowledge base
   * (docs/adr/0024). The statistics are counted at query time from the rows left, so they stay
   * right (docs/adr/0019). Idempotent; returns the chunks removed.
   */
  deleteDocuments(space: IndexSpace, documentIds: string[]): Promise<number>;
  /** Every document of the space with the versions it holds, by document id (orphan sweep). */
  documentVersions(space: IndexSpace): AsyncIterable<{ documentId: string; versions: number[] }>;
  /**
   * Replaces a document's knowledge bases, tags and metadata on its chunks, in place. `principals`:
   * the ACL as recorded, for an index that rewrites whole records from an eventually consistent
   * read (Pinecone, review M8); indexes that update columns ignore it.
   */
  setAttributes(
    space: IndexSpace,
    documentId: string,
    attributes: EditableAttributes,
    principals?: string[],
  ): Promise<number>;
  /** Replaces who may read a document's chunks, in place. Returns the count. */
  setPrincipals(space: IndexSpace, documentId: string, principals: string[]): Promise<number>;
  countDocument(space: IndexSpace, documentId: string): Promise<number>;
  /**
   * The titles and texts of these chunks, by `<document>#<version>#<chunk>`; unknown chunks are
   * absent. Hybrid search reads the texts of its semantic candidates here rather than from the
   * vector store (docs/adr/0029, twelfth pass).
   */
  texts(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkText>>;
  /** The locations of these chunks, by `<document>#<version>#<chunk>`; unknown chunks are absent. */
  locations(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, ChunkLocation>>;
  /**
   * The indexed terms of these chunks, by `<document>#<version>#<chunk>` (pseudo-relevance
   * feedback reads the best hits' terms); unknown chunks are absent.
   */
  termVectors(space: IndexSpace, chunks: ChunkRef[]): Promise<Map<string, TermVector>>;
  /**
   * Which of these chunks satisfy the syntax typed in the query (its parsed `constraint`:
   * phrases, operators, exclusions, identifiers typed as operands), by `<document>#<version>#<chunk>`; every chunk when it has none. How
   * hybrid search holds the semantic side's candidates to what the query demands.
   */
  matching(space: IndexSpace, query: string, chunks: ChunkRef[]): Promise<Set<string>>;
  /** Chunks of the same document version within `radius` of each anchor (anchors included). */
  chunksAround(space: IndexSpace, anchors: ChunkRef[], radius: number): Promise<LexicalRecord[]>;
  /** Resolves when the index answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * An index that holds spaces in memory: what it holds now (`warmSet`), and the same taken up
   * again by a new process before its first search (`warm`; docs/adr/0062). Absent elsewhere.
   */
  warmSet?(limits: { spaces: number; lexemes: number }): WarmSpace[];
  /**
   * Holds the space at its current generation and these lexemes' lists in it, waiting for both;
   * false when the space cannot be held (its generation or rows unreadable, or too large).
   */
  warm?(space: IndexSpace, lexemes: string[]): Promise<boolean>;
}

/** A space an index holds in memory and the lexemes whose lists it holds there, most used first. */
export interface WarmSpace {
  space: IndexSpace;
  lexemes: string[];
}
