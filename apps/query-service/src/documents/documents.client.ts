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

export interface DocumentRecordPage {
  items: DocumentRecord[];
  nextCursor: string | null;
}

const TIMEOUT_MS = 5_000;

/**
 * Reads documents from document-service, which owns them, for the gRPC GetDocument and
 * ListDocuments calls. The caller's own token is forwarded, so document-service applies the same
 * permissions and ACLs as it would to them; its answers (400, 401, 403, 404) come back as they
 * are; anything else is 503.
 */
@Injectable()
export class DocumentsClient {
  private readonly logger = new Logger(DocumentsClient.name);

  constructor(@Inject(QUERY_CONFIG) private readonly config: QueryConfig) {}

  get(caller: Caller, documentId: string): Promise<DocumentRecord> {
    return this.request(caller, `/v1/documents/${encodeURIComponent(documentId)}`);
  }

  list(caller: Caller, limit: number, cursor?: string): Promise<DocumentRecordPage> {
    const query = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
    return this.request(caller, `/v1/documents?${query.toString()}`);
  }

  private async request<T>(caller: Caller, path: string): Promise<T> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.config.DOCUMENT_SERVICE_URL), {
        headers: { authorization: `Bearer ${caller.token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      // The cause (addresses, timeouts) is for the logs, not for the caller.
      this.logger.warn(`document-service is unreachable: ${String(error)}`);
      throw DocumentServiceError.unavailable('document-service is unreachable, retry later');
    }
    if (response.ok) return (await response.json()) as T;
    const body = (await response.json().catch(() => ({}))) as {
      error?: { code?: string; message?: string };
    };
    if ([400, 401, 403, 404].includes(response.status)) {
      throw DocumentServiceError.relayed(
        response.status,
        body.error?.code ?? 'document_service_error',
        body.error?.message ?? `document-service answered ${response.status}`,
      );
    }
    throw DocumentServiceError.unavailable(`document-service answered ${response.status}`);
  }
}
