import {
  type DocumentOperations,
  type DocumentPage,
  type DocumentServiceClient,
  documentServiceClient,
  type DocumentTextWindow,
  type DocumentView,
  errorBodyOf,
  type KnowledgeBaseView,
  type QueryOf,
  type QuotasView,
} from '@kb/api-client';
import type { Caller } from '@kb/auth';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { QUERY_CONFIG, type QueryConfig } from '../config/query.config';
import { DocumentServiceError } from './documents.errors';

/** The original as document-service streams it. */
export interface DocumentContentStream {
  contentType: string;
  sizeBytes: number;
  /** The content's SHA-256 (document-service's ETag, unquoted). */
  sha256: string;
  filename: string;
  body: AsyncIterable<Uint8Array>;
}

const TIMEOUT_MS = 5_000;
/**
 * Ids per listing call of `getMany`: a UUID takes 39 characters of the `where` filter, which
 * document-service caps at 800.
 */
const MANY_PER_CALL = 16;

/** What one call of the generated client answers (openapi-fetch's `{ data, error, response }`). */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * Reads documents from document-service, which owns them, for the gRPC GetDocument and
 * ListDocuments calls, through the client generated from its OpenAPI document. The caller's own
 * token is forwarded, so document-service applies the same permissions and ACLs as it would to
 * them; its answers (400, 401, 403, 404, 409, and 429 with its Retry-After) come back as they are;
 * anything else is 503.
 */
@Injectable()
export class DocumentsClient {
  private readonly logger = new Logger(DocumentsClient.name);

  constructor(@Inject(QUERY_CONFIG) private readonly config: QueryConfig) {}

  get(caller: Caller, documentId: string): Promise<DocumentView> {
    return this.read(() =>
      this.api(caller).GET('/v1/documents/{id}', {
        params: { path: { id: documentId } },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }),
    );
  }

  /** The limits in force for the caller's tenant and its knowledge bases (docs/adr/0053). */
  quotas(caller: Caller, timeoutMs = TIMEOUT_MS): Promise<QuotasView> {
    return this.read(() =>
      this.api(caller).GET('/v1/quotas', { signal: AbortSignal.timeout(timeoutMs) }),
    );
  }

  /** A knowledge base as the caller may see it (its settings, e.g. `contextRerank`). */
  knowledgeBase(caller: Caller, id: string): Promise<KnowledgeBaseView> {
    return this.read(() =>
      this.api(caller).GET('/v1/knowledge-bases/{id}', {
        params: { path: { id } },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }),
    );
  }

  /**
   * The documents among `ids` that the caller may read, by id, in one listing call per
   * `MANY_PER_CALL` ids (`GET /v1/documents?where={"document_id":{"$in":[…]}}`, the same ACL as
   * `get`): a search's hit details cost one round trip instead of one per document (ADR 29). An
   * id the caller may not read, or that is gone, is simply absent, as a 404 would be.
   */
  async getMany(caller: Caller, ids: string[]): Promise<Map<string, DocumentView>> {
    const unique = [...new Set(ids)];
    const groups: string[][] = [];
    for (let i = 0; i < unique.length; i += MANY_PER_CALL) {
      groups.push(unique.slice(i, i + MANY_PER_CALL));
    }
    const pages = await Promise.all(
      groups.map((group) =>
        this.list(caller, group.length, undefined, {
          where: JSON.stringify({ document_id: { $in: group } }),
        }),
      ),
    );
    return new Map(pages.flatMap((page) => page.items.map((item) => [item.id, item] as const)));
  }

  /** A page of the caller's documents, optionally matching `where` and in one knowledge base. */
  list(
    caller: Caller,
    limit: number,
    cursor?: string,
    scope: { where?: string | undefined; knowledgeBaseId?: string | undefined } = {},
  ): Promise<DocumentPage> {
    const query = {
      limit,
      ...(cursor ? { cursor } : {}),
      ...(scope.where ? { where: scope.where } : {}),
    };
    const signal = AbortSignal.timeout(TIMEOUT_MS);
    const knowledgeBaseId = scope.knowledgeBaseId;
    return this.read<DocumentPage>(() =>
      knowledgeBaseId
        ? this.api(caller).GET('/v1/knowledge-bases/{id}/documents', {
            params: { path: { id: knowledgeBaseId }, query },
            signal,
          })
        : this.api(caller).GET('/v1/documents', {
            // externalIdPrefix is optional; the OpenAPI document marks it required (see ADR 37).
            params: { query: query as QueryOf<DocumentOperations['listDocuments']> },
            signal,
          }),
    );
  }

  text(
    caller: Caller,
    documentId: string,
    window: { offset: number; limit: number },
  ): Promise<DocumentTextWindow> {
    return this.read(() =>
      this.api(caller).GET('/v1/documents/{id}/text', {
        params: { path: { id: documentId }, query: window },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }),
    );
  }

  /** Opens the original's download; the body is read as the caller's stream consumes it. */
  async openContent(caller: Caller, documentId: string): Promise<DocumentContentStream> {
    // No overall timeout: a large original may take longer than any fixed bound to stream.
    const {
      data: body,
      error,
      response,
    } = await this.reach(() =>
      this.api(caller).GET('/v1/documents/{id}/content', {
        params: { path: { id: documentId } },
        headers: { accept: '*/*' },
        parseAs: 'stream',
      }),
    );
    if (!response.ok) return this.refusal(response, error);
    if (!body) throw DocumentServiceError.unavailable('document-service sent no body');
    const disposition = response.headers.get('content-disposition') ?? '';
    const encodedName = /filename\*=UTF-8''([^;]+)/.exec(disposition)?.[1];
    return {
      contentType: response.headers.get('content-type') ?? 'application/octet-stream',
      sizeBytes: Number(response.headers.get('content-length') ?? 0),
      sha256: (response.headers.get('etag') ?? '').replaceAll('"', ''),
      filename: encodedName ? decodeURIComponent(encodedName) : '',
      body,
    };
  }

  /** document-service's generated client with the caller's token. */
  private api(caller: Caller): DocumentServiceClient {
    return documentServiceClient({
      baseUrl: this.config.DOCUMENT_SERVICE_URL,
      token: caller.token,
    });
  }

  private async reach<T>(call: () => Promise<Answer<T>>): Promise<Answer<T>> {
    try {
      return await call();
    } catch (error) {
      // The cause (addresses, timeouts) is for the logs, not for the caller.
      this.logger.warn(`document-service is unreachable: ${String(error)}`);
      throw DocumentServiceError.unavailable('document-service is unreachable, retry later');
    }
  }

  private async read<T>(call: () => Promise<Answer<T>>): Promise<T> {
    const { data, error, response } = await this.reach(call);
    if (response.ok && data !== undefined) return data;
    return this.refusal(response, error);
  }

  private refusal(response: Response, body: unknown): never {
    const error = errorBodyOf(body);
    if ([400, 401, 403, 404, 409].includes(response.status)) {
      throw DocumentServiceError.relayed(
        response.status,
        error.code ?? 'document_service_error',
        error.message ?? `document-service answered ${response.status}`,
      );
    }
    if (response.status === 429) {
      // The caller's read budget, not document-service's health: relayed with its delay.
      const retryAfter = Number(response.headers.get('retry-after'));
      throw DocumentServiceError.rateLimited(
        error.message ?? 'too many read calls; retry later',
        Number.isFinite(retryAfter) && retryAfter >= 1 ? Math.ceil(retryAfter) : 1,
      );
    }
    throw DocumentServiceError.unavailable(`document-service answered ${response.status}`);
  }
}
