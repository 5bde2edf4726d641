/** A JSON object as the knowledge base's REST APIs answer it. */
export type JsonObject = { [key: string]: unknown };

/** `POST /v1/search`'s body (query-service), as the tools send it. */
export interface SearchRequest {
  query: string;
  topK: number;
  offset: number;
  mode: 'auto' | 'hybrid' | 'semantic' | 'lexical';
  knowledgeBaseIds: string[];
  filter?: JsonObject;
}

/** `POST /v1/context`'s body (query-service). */
export interface ContextRequest {
  question: string;
  tokenBudget: number;
  mode: 'auto' | 'hybrid' | 'semantic' | 'lexical';
  knowledgeBaseIds: string[];
  filter?: JsonObject;
  /** Absent: the knowledge bases' `contextRerank` decides. */
  rerank?: boolean;
}

/** `GET /v1/documents/{id}/text`'s query (document-service), in UTF-16 code units. */
export interface TextWindow {
  offset: number;
  limit: number;
  version?: number;
}

/** `POST /v1/sources`' body (document-service), as `kb_add_source` sends it. */
export interface CreateSourceRequest {
  name: string;
  knowledgeBaseId: string;
  kind: 's3';
  bucket: string;
  prefix: string;
  include?: string[];
  exclude?: string[];
  schedule?: string;
  timezone?: string;
}

export interface ListDocumentsRequest {
  limit: number;
  cursor?: string;
  knowledgeBaseId?: string;
}

/**
 * What the MCP tools read, always as one caller: every method answers only what that caller may
 * read (their tenant, their ACLs). query-service implements it in process for the Streamable
 * HTTP endpoint; the CLI's `kb mcp` implements it over the REST APIs with the caller's token.
 * Failures are `KnowledgeBaseApiError`s, or errors with a string `code`, which the tools show.
 */
export interface KnowledgeBasePort {
  /** The search response of `POST /v1/search`. */
  search(request: SearchRequest): Promise<object>;
  /** `POST /v1/context`'s answer: `passages` with citations. */
  context(request: ContextRequest): Promise<object>;
  getDocument(documentId: string): Promise<object>;
  getDocumentText(documentId: string, window: TextWindow): Promise<object>;
  /** A page: `items` and `nextCursor`. */
  listDocuments(request: ListDocumentsRequest): Promise<object>;
  /** `{ items }`. */
  listKnowledgeBases(): Promise<object>;
  stats(): Promise<object>;
  /** The created source. */
  createSource(request: CreateSourceRequest): Promise<object>;
  /** Starts a sync in the background: the running sync. */
  syncSource(sourceId: string): Promise<object>;
  /** One sync: running, or finished with its counts and failures. */
  getSourceSync(sourceId: string, syncId: string): Promise<object>;
}

/** An API's refusal as its caller sees it: the HTTP status and the stable error code. */
export class KnowledgeBaseApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'KnowledgeBaseApiError';
  }
}
