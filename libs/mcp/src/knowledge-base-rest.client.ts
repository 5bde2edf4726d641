import {
  type ContextRequest,
  type JsonObject,
  KnowledgeBaseApiError,
  type KnowledgeBasePort,
  type ListDocumentsRequest,
  type SearchRequest,
  type TextWindow,
} from './knowledge-base.port';

export interface RestEndpoints {
  /** document-service, e.g. http://127.0.0.1:3001 */
  documentsUrl: string;
  /** query-service, e.g. http://127.0.0.1:3005; needed for search and context only. */
  queryUrl?: string;
  /** The caller's bearer token: the APIs apply its tenant, permissions and ACLs. */
  token: string;
  timeoutMs?: number;
  /**
   * Where the detail of a failed call goes (the URL and the fetch error): the server's log. The
   * caller, and through the tools the model, only get the generic `unavailable` refusal.
   */
  logFailure?: (detail: string) => void;
}

/** What a tool shows when an API cannot be reached: no URL, no host, no socket error. */
export const UNREACHABLE_MESSAGE = 'the knowledge base API is unavailable; try again shortly';

/**
 * The port over the public REST APIs, with one caller's token: what `kb mcp` (stdio) uses, and
 * query-service for the reads document-service owns. Every refusal keeps its status and code.
 */
export class KnowledgeBaseRestClient implements KnowledgeBasePort {
  constructor(private readonly endpoints: RestEndpoints) {}

  search(request: SearchRequest): Promise<JsonObject> {
    return this.call(this.queryUrl(), '/v1/search', request);
  }

  context(request: ContextRequest): Promise<JsonObject> {
    return this.call(this.queryUrl(), '/v1/context', request);
  }

  private queryUrl(): string {
    if (!this.endpoints.queryUrl) throw new Error('no query-service URL was given');
    return this.endpoints.queryUrl;
  }

  getDocument(documentId: string): Promise<JsonObject> {
    return this.call(
      this.endpoints.documentsUrl,
      `/v1/documents/${encodeURIComponent(documentId)}`,
    );
  }

  getDocumentText(documentId: string, window: TextWindow): Promise<JsonObject> {
    const query = new URLSearchParams({
      offset: String(window.offset),
      limit: String(window.limit),
    });
    if (window.version !== undefined) query.set('version', String(window.version));
    return this.call(
      this.endpoints.documentsUrl,
      `/v1/documents/${encodeURIComponent(documentId)}/text?${query.toString()}`,
    );
  }

  listDocuments(request: ListDocumentsRequest): Promise<JsonObject> {
    const query = new URLSearchParams({ limit: String(request.limit) });
    if (request.cursor) query.set('cursor', request.cursor);
    const path = request.knowledgeBaseId
      ? `/v1/knowledge-bases/${encodeURIComponent(request.knowledgeBaseId)}/documents`
      : '/v1/documents';
    return this.call(this.endpoints.documentsUrl, `${path}?${query.toString()}`);
  }

  listKnowledgeBases(): Promise<JsonObject> {
    return this.call(this.endpoints.documentsUrl, '/v1/knowledge-bases');
  }

  stats(): Promise<JsonObject> {
    return this.call(this.endpoints.documentsUrl, '/v1/stats');
  }

  private async call(base: string, path: string, body?: object): Promise<JsonObject> {
    let response: Response;
    try {
      response = await fetch(new URL(path, base), {
        method: body ? 'POST' : 'GET',
        headers: {
          authorization: `Bearer ${this.endpoints.token}`,
          accept: 'application/json',
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.endpoints.timeoutMs ?? 30_000),
      });
    } catch (error) {
      // The URL is in-cluster and the error names hosts and ports: logged here, never returned.
      const cause = error instanceof Error && error.cause ? ` (${String(error.cause)})` : '';
      this.endpoints.logFailure?.(`${base}${path} is unreachable: ${String(error)}${cause}`);
      throw new KnowledgeBaseApiError(503, 'unavailable', UNREACHABLE_MESSAGE);
    }
    const answer = (await response.json().catch(() => ({}))) as JsonObject & {
      error?: { code?: string; message?: string };
    };
    if (!response.ok) {
      throw new KnowledgeBaseApiError(
        response.status,
        answer.error?.code ?? 'http_error',
        answer.error?.message ?? `HTTP ${response.status}`,
      );
    }
    return answer;
  }
}
