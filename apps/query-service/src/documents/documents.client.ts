import type { Caller } from '@kb/auth';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { QUERY_CONFIG, type QueryConfig } from '../config/query.config';
import { DocumentServiceError } from './documents.errors';

/** A document as document-service's REST API returns it (the fields read here). */
export interface DocumentRecord {
  id: string;
  title: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
  version: number;
  status: string;
  failure: { reason: string; detail: string | null } | null;
  chunkCount: number | null;
  metadata: Record<string, unknown>;
  tags: string[];
  knowledgeBaseIds: string[];
  createdAt: string;
  updatedAt: string;
}

/** `GET /v1/documents/:id/text`: a window of the extracted text and its maps. */
export interface DocumentTextRecord {
  documentId: string;
  version: number;
  format: string;
  length: number;
  offset: number;
  text: string;
  nextOffset: number | null;
  pages: Array<{ page: number; start: number; end: number }>;
  headings: Array<{ start: number; level: number; text: string }>;
}

/** The original as document-service streams it. */
export interface DocumentContentStream {
  contentType: string;
  sizeBytes: number;
  /** The content's SHA-256 (document-service's ETag, unquoted). */
  sha256: string;
  filename: string;
  body: AsyncIterable<Uint8Array>;
}

export interface DocumentRecordPage {
  items: DocumentRecord[];
  nextCursor: string | null;
}

const TIMEOUT_MS = 5_000;
/**
 * Ids per listing call of `getMany`: a UUID takes 39 characters of the `where` filter, which
 * document-service caps at 800.
 */
const MANY_PER_CALL = 16;

/**
 * Reads documents from document-service, which owns them, for the gRPC GetDocument and
 * ListDocuments calls. The caller's own token is forwarded, so document-service applies the same
 * permissions and ACLs as it would to them; its answers (400, 401, 403, 404, 409, and 429 with its
 * Retry-After) come back as they are; anything else is 503.
 */
@Injectable()
export class DocumentsClient {
  private readonly logger = new Logger(DocumentsClient.name);

  constructor(@Inject(QUERY_CONFIG) private readonly config: QueryConfig) {}

  get(caller: Caller, documentId: string): Promise<DocumentRecord> {
    return this.request(caller, `/v1/documents/${encodeURIComponent(documentId)}`);
  }

  /**
   * The documents among `ids` that the caller may read, by id, in one listing call per
   * `MANY_PER_CALL` ids (`GET /v1/documents?where={"document_id":{"$in":[…]}}`, the same ACL as
   * `get`): a search's hit details cost one round trip instead of one per document (ADR 29). An
   * id the caller may not read, or that is gone, is simply absent, as a 404 would be.
   */
  async getMany(caller: Caller, ids: string[]): Promise<Map<string, DocumentRecord>> {
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
  ): Promise<DocumentRecordPage> {
    const query = new URLSearchParams({
      limit: String(limit),
      ...(cursor ? { cursor } : {}),
      ...(scope.where ? { where: scope.where } : {}),
    });
    const path = scope.knowledgeBaseId
      ? `/v1/knowledge-bases/${encodeURIComponent(scope.knowledgeBaseId)}/documents`
      : '/v1/documents';
    return this.request(caller, `${path}?${query.toString()}`);
  }

  text(
    caller: Caller,
    documentId: string,
    window: { offset: number; limit: number },
  ): Promise<DocumentTextRecord> {
    const query = new URLSearchParams({
      offset: String(window.offset),
      limit: String(window.limit),
    });
    return this.request(
      caller,
      `/v1/documents/${encodeURIComponent(documentId)}/text?${query.toString()}`,
    );
  }

  /** Opens the original's download; the body is read as the caller's stream consumes it. */
  async openContent(caller: Caller, documentId: string): Promise<DocumentContentStream> {
    // No overall timeout: a large original may take longer than any fixed bound to stream.
    const response = await this.fetch(
      caller,
      `/v1/documents/${encodeURIComponent(documentId)}/content`,
      '*/*',
    );
    if (!response.ok) return this.refusal(response);
    if (!response.body) throw DocumentServiceError.unavailable('document-service sent no body');
    const disposition = response.headers.get('content-disposition') ?? '';
    const encodedName = /filename\*=UTF-8''([^;]+)/.exec(disposition)?.[1];
    return {
      contentType: response.headers.get('content-type') ?? 'application/octet-stream',
      sizeBytes: Number(response.headers.get('content-length') ?? 0),
      sha256: (response.headers.get('etag') ?? '').replaceAll('"', ''),
      filename: encodedName ? decodeURIComponent(encodedName) : '',
      body: response.body,
    };
  }

  private async fetch(
    caller: Caller,
    path: string,
    accept: string,
    timeoutMs?: number,
  ): Promise<Response> {
    try {
      return await fetch(new URL(path, this.config.DOCUMENT_SERVICE_URL), {
        headers: { authorization: `Bearer ${caller.token}`, accept },
        ...(timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
      });
    } catch (error) {
      // The cause (addresses, timeouts) is for the logs, not for the caller.
      this.logger.warn(`document-service is unreachable: ${String(error)}`);
      throw DocumentServiceError.unavailable('document-service is unreachable, retry later');
    }
  }

  private async request<T>(caller: Caller, path: string): Promise<T> {
    const response = await this.fetch(caller, path, 'application/json', TIMEOUT_MS);
    if (response.ok) return (await response.json()) as T;
    return this.refusal(response);
  }

  private async refusal(response: Response): Promise<never> {
    const body = (await response.json().catch(() => ({}))) as {
      error?: { code?: string; message?: string };
    };
    if ([400, 401, 403, 404, 409].includes(response.status)) {
      throw DocumentServiceError.relayed(
        response.status,
        body.error?.code ?? 'document_service_error',
        body.error?.message ?? `document-service answered ${response.status}`,
      );
    }
    if (response.status === 429) {
      // The caller's read budget, not document-service's health: relayed with its delay.
      const retryAfter = Number(response.headers.get('retry-after'));
      throw DocumentServiceError.rateLimited(
        body.error?.message ?? 'too many read calls; retry later',
        Number.isFinite(retryAfter) && retryAfter >= 1 ? Math.ceil(retryAfter) : 1,
      );
    }
    throw DocumentServiceError.unavailable(`document-service answered ${response.status}`);
  }
}
