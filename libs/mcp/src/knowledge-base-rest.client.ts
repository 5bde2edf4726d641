import {
  type DocumentOperations,
  type DocumentServiceClient,
  documentServiceClient,
  errorBodyOf,
  type QueryOf,
  type QueryServiceClient,
  queryServiceClient,
} from '@kb/api-client';

import {
  type ContextRequest,
  type CreateSourceRequest,
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

/** What one call of a generated client answers (openapi-fetch's `{ data, error, response }`). */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The port over the public REST APIs, with one caller's token, through the clients generated from
 * their OpenAPI documents: what `kb mcp` (stdio) uses, and query-service for the reads
 * document-service owns. Every refusal keeps its status and code.
 */
export class KnowledgeBaseRestClient implements KnowledgeBasePort {
  private readonly documents: DocumentServiceClient;
  private readonly query?: QueryServiceClient;

  constructor(private readonly endpoints: RestEndpoints) {
    const { token } = endpoints;
    this.documents = documentServiceClient({ baseUrl: endpoints.documentsUrl, token });
    if (endpoints.queryUrl) this.query = queryServiceClient({ baseUrl: endpoints.queryUrl, token });
  }

  search(request: SearchRequest) {
    return this.call(this.queryUrl(), '/v1/search', (signal) =>
      this.queryApi().POST('/v1/search', { body: request, signal }),
    );
  }

  context(request: ContextRequest) {
    return this.call(this.queryUrl(), '/v1/context', (signal) =>
      this.queryApi().POST('/v1/context', { body: request, signal }),
    );
  }

  private queryUrl(): string {
    if (!this.endpoints.queryUrl) throw new Error('no query-service URL was given');
    return this.endpoints.queryUrl;
  }

  private queryApi(): QueryServiceClient {
    if (!this.query) throw new Error('no query-service URL was given');
    return this.query;
  }

  getDocument(documentId: string) {
    return this.call(this.endpoints.documentsUrl, '/v1/documents/{id}', (signal) =>
      this.documents.GET('/v1/documents/{id}', { params: { path: { id: documentId } }, signal }),
    );
  }

  getDocumentText(documentId: string, window: TextWindow) {
    const query = {
      offset: window.offset,
      limit: window.limit,
      ...(window.version !== undefined ? { version: window.version } : {}),
    };
    return this.call(this.endpoints.documentsUrl, '/v1/documents/{id}/text', (signal) =>
      this.documents.GET('/v1/documents/{id}/text', {
        params: { path: { id: documentId }, query },
        signal,
      }),
    );
  }

  listDocuments(request: ListDocumentsRequest) {
    const query = { limit: request.limit, ...(request.cursor ? { cursor: request.cursor } : {}) };
    const knowledgeBaseId = request.knowledgeBaseId;
    if (knowledgeBaseId) {
      return this.call(
        this.endpoints.documentsUrl,
        '/v1/knowledge-bases/{id}/documents',
        (signal) =>
          this.documents.GET('/v1/knowledge-bases/{id}/documents', {
            params: { path: { id: knowledgeBaseId }, query },
            signal,
          }),
      );
    }
    return this.call(this.endpoints.documentsUrl, '/v1/documents', (signal) =>
      this.documents.GET('/v1/documents', {
        // externalIdPrefix is optional; the OpenAPI document marks it required (see ADR 37).
        params: { query: query as QueryOf<DocumentOperations['listDocuments']> },
        signal,
      }),
    );
  }

  listKnowledgeBases() {
    return this.call(this.endpoints.documentsUrl, '/v1/knowledge-bases', (signal) =>
      this.documents.GET('/v1/knowledge-bases', { signal }),
    );
  }

  stats() {
    return this.call(this.endpoints.documentsUrl, '/v1/stats', (signal) =>
      this.documents.GET('/v1/stats', { signal }),
    );
  }

  createSource(request: CreateSourceRequest) {
    return this.call(this.endpoints.documentsUrl, '/v1/sources', (signal) =>
      this.documents.POST('/v1/sources', { body: request, signal }),
    );
  }

  syncSource(sourceId: string) {
    return this.call(this.endpoints.documentsUrl, '/v1/sources/{id}/sync', (signal) =>
      this.documents.POST('/v1/sources/{id}/sync', {
        params: { path: { id: sourceId }, query: { wait: 'false' } },
        signal,
      }),
    );
  }

  getSourceSync(sourceId: string, syncId: string) {
    return this.call(this.endpoints.documentsUrl, '/v1/sources/{id}/syncs/{syncId}', (signal) =>
      this.documents.GET('/v1/sources/{id}/syncs/{syncId}', {
        params: { path: { id: sourceId, syncId } },
        signal,
      }),
    );
  }

  /** One call: its answer, or a `KnowledgeBaseApiError` with the API's status and code. */
  private async call<T>(
    base: string,
    path: string,
    send: (signal: AbortSignal) => Promise<Answer<T>>,
  ): Promise<T> {
    let answer: Answer<T>;
    try {
      answer = await send(AbortSignal.timeout(this.endpoints.timeoutMs ?? 30_000));
    } catch (error) {
      // The URL is in-cluster and the error names hosts and ports: logged here, never returned.
      const cause = error instanceof Error && error.cause ? ` (${String(error.cause)})` : '';
      this.endpoints.logFailure?.(`${base}${path} is unreachable: ${String(error)}${cause}`);
      throw new KnowledgeBaseApiError(503, 'unavailable', UNREACHABLE_MESSAGE);
    }
    const { data, error, response } = answer;
    if (response.ok) return data as T;
    const refusal = errorBodyOf(error);
    throw new KnowledgeBaseApiError(
      response.status,
      refusal.code ?? 'http_error',
      refusal.message ?? `HTTP ${response.status}`,
    );
  }
}
