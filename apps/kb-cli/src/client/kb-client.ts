import { credentials, Metadata } from '@grpc/grpc-js';
import {
  type DocumentOperations,
  type DocumentPage,
  type DocumentServiceClient,
  documentServiceClient,
  type DocumentView,
  errorBodyOf,
  type QueryOf,
  type SourceView,
  type UploadedDocument as UploadAnswer,
} from '@kb/api-client';
import { mintToken, type TokenClaims } from '@kb/auth';
import { kbv1, type SyncCounts } from '@kb/contracts';
import { parseServerTiming, type StageTiming } from '@kb/observability/server-timing';

export interface KbEndpoints {
  documentsUrl: string;
  grpcAddress: string;
  /** The caller's bearer token (`kb token` mints one); it names the tenant. */
  token: string;
}

/** What an upload answers: the document, new or a duplicate (document-service's OpenAPI). */
export type UploadedDocument = UploadAnswer;
/** A document as `GET /v1/documents/{id}` answers it. */
export type DocumentSummary = DocumentView;

type UploadParts =
  DocumentOperations['uploadDocument']['requestBody']['content']['multipart/form-data'];
type ListQuery = QueryOf<DocumentOperations['listDocuments']>;

/**
 * The multipart body of `POST /v1/documents`: the typed text parts, and the file's bytes under
 * `file` (its part in `parts` holds the file name).
 */
function uploadForm(parts: UploadParts, content: Blob): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(parts)) {
    if (name === 'file') form.append('file', content, parts.file);
    else if (value !== undefined) form.append(name, value);
  }
  return form;
}

/** The public APIs as a caller sees them: REST for documents, gRPC for search. */
export class KbClient {
  private grpcClient?: kbv1.KnowledgeBaseClient;
  private readonly documents: DocumentServiceClient;

  constructor(private readonly endpoints: KbEndpoints) {
    this.documents = documentServiceClient({
      baseUrl: endpoints.documentsUrl,
      token: endpoints.token,
    });
  }

  /** Opened on first use: commands that only use REST never dial gRPC. */
  private get grpc(): kbv1.KnowledgeBaseClient {
    this.grpcClient ??= new kbv1.KnowledgeBaseClient(
      this.endpoints.grpcAddress,
      credentials.createInsecure(),
    );
    return this.grpcClient;
  }

  async upload(
    filename: string,
    content: string | Buffer,
    fields: {
      title?: string;
      metadata?: object;
      tags?: string[];
      knowledgeBaseIds?: string[];
      acl?: { users?: string[]; groups?: string[]; roles?: string[]; tenant?: boolean };
    },
  ): Promise<UploadedDocument> {
    const json = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value));
    const parts: UploadParts = {
      file: filename,
      ...(fields.title ? { title: fields.title } : {}),
      metadata: json(fields.metadata),
      tags: json(fields.tags),
      acl: json(fields.acl),
      knowledgeBaseIds: json(fields.knowledgeBaseIds),
    };
    const { data, error, response } = await this.postUpload(parts, new Blob([content]));
    if (!data) {
      const refusal = errorBodyOf(error);
      throw new Error(
        `upload of ${filename} failed: ${response.status} ${refusal.code}: ${refusal.message}`,
      );
    }
    return data;
  }

  /**
   * POST /v1/documents. A busy suite may answer 503 (a dependency it asks first did not answer in
   * time): nothing was stored, so the upload is tried again, up to five times, with growing pauses.
   */
  private async postUpload(parts: UploadParts, content: Blob) {
    for (let attempt = 1; ; attempt++) {
      const answer = await this.documents.POST('/v1/documents', {
        body: parts,
        bodySerializer: () => uploadForm(parts, content),
      });
      if (answer.response.status !== 503 || attempt === 5) return answer;
      await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
    }
  }

  /**
   * Uploads a file and reports the outcome instead of throwing: the document (new or duplicate),
   * or the API's status, error code and message.
   */
  async tryUpload(
    filename: string,
    content: Buffer,
    contentType: string,
    fields: { title?: string; knowledgeBaseIds?: string[]; externalId?: string } = {},
  ): Promise<
    | { ok: true; document: UploadedDocument }
    | { ok: false; status: number; code: string; message: string }
  > {
    const parts: UploadParts = {
      file: filename,
      ...(fields.title ? { title: fields.title } : {}),
      ...(fields.knowledgeBaseIds
        ? { knowledgeBaseIds: JSON.stringify(fields.knowledgeBaseIds) }
        : {}),
      ...(fields.externalId ? { externalId: fields.externalId } : {}),
    };
    const { data, error, response } = await this.postUpload(
      parts,
      new Blob([content], { type: contentType }),
    );
    if (data) return { ok: true, document: data };
    const refusal = errorBodyOf(error);
    return {
      ok: false,
      status: response.status,
      code: refusal.code ?? 'http_error',
      message: refusal.message ?? `HTTP ${response.status}`,
    };
  }

  /** Creates a knowledge base (the default pipeline unless given). */
  async createKnowledgeBase(
    id: string,
    name: string,
    pipeline: { embeddingModel?: string } = {},
  ): Promise<void> {
    const { error, response } = await this.documents.POST('/v1/knowledge-bases', {
      body: { id, name, ...pipeline },
    });
    if (!response.ok) {
      throw new Error(
        `creating knowledge base ${id} failed: ${response.status} ${JSON.stringify(error)}`,
      );
    }
  }

  async getDocument(id: string): Promise<DocumentSummary> {
    const { data, response } = await this.documents.GET('/v1/documents/{id}', {
      params: { path: { id } },
    });
    if (!data) throw new Error(`reading document ${id} failed: ${response.status}`);
    return data;
  }

  /**
   * The caller's documents whose external id starts with `prefix` (what a sync brought), every
   * page of them: the listing is paged (1000 at most a page).
   */
  async listByExternalIdPrefix(
    prefix: string,
  ): Promise<Array<{ id: string; externalId: string; sha256: string }>> {
    const items: Array<{ id: string; externalId: string; sha256: string }> = [];
    let cursor: string | null = null;
    do {
      const query: ListQuery = {
        externalIdPrefix: prefix,
        limit: 1000,
        ...(cursor ? { cursor } : {}),
      };
      const { data: page, response } = await this.documents.GET('/v1/documents', {
        params: { query },
      });
      if (!page) throw new Error(`listing documents failed: ${response.status}`);
      for (const { id, externalId, sha256 } of page.items) {
        items.push({ id, externalId: externalId ?? '', sha256 });
      }
      cursor = page.nextCursor;
    } while (cursor);
    return items;
  }

  /** Deletes a document; the API's error code instead of a throw. */
  async tryDelete(id: string): Promise<{ ok: true } | { ok: false; code: string }> {
    const { error, response } = await this.documents.DELETE('/v1/documents/{id}', {
      params: { path: { id } },
    });
    if (response.ok) return { ok: true };
    return { ok: false, code: errorBodyOf(error).code ?? `http_${response.status}` };
  }

  /** A source (`kb sync --source`): its knowledge base, external id prefix and globs. */
  async getSource(id: string): Promise<SourceView> {
    const { data, response } = await this.documents.GET('/v1/sources/{id}', {
      params: { path: { id } },
    });
    if (!data) throw new Error(`reading source ${id} failed: ${response.status}`);
    return data;
  }

  /**
   * Opens a sync of a folder source before `kb sync --source` uploads (ADR 43): its id, or the
   * API's refusal (409 `sync_in_progress` while another runs).
   */
  async openSourceSync(id: string): Promise<string> {
    const { data, error, response } = await this.documents.POST('/v1/sources/{id}/syncs', {
      params: { path: { id } },
    });
    if (!data) {
      const body = errorBodyOf(error);
      throw new Error(
        `opening a sync of source ${id} failed: ${body.code ?? response.status} ${body.message ?? ''}`.trim(),
      );
    }
    return data.id;
  }

  /** Closes it with what the sync did; document-service then sends `source.synced`. */
  async finishSourceSync(
    id: string,
    syncId: string,
    report: {
      status: 'succeeded' | 'failed';
      counts: SyncCounts;
      failures: Array<{ path: string; reason: string }>;
    },
  ): Promise<void> {
    const { error, response } = await this.documents.POST(
      '/v1/sources/{id}/syncs/{syncId}/finish',
      {
        params: { path: { id, syncId } },
        body: report,
      },
    );
    if (!response.ok) {
      const body = errorBodyOf(error);
      throw new Error(
        `reporting sync ${syncId} of source ${id} failed: ${body.code ?? response.status} ${body.message ?? ''}`.trim(),
      );
    }
  }

  /** Every document the caller may read, or those of one knowledge base, following the cursor. */
  async listAll(knowledgeBaseId?: string): Promise<DocumentSummary[]> {
    const all: DocumentSummary[] = [];
    let cursor: string | null = null;
    do {
      const query: { limit: number; cursor?: string } = {
        limit: 100,
        ...(cursor ? { cursor } : {}),
      };
      const { data: page, response }: { data?: DocumentPage; response: Response } = knowledgeBaseId
        ? await this.documents.GET('/v1/knowledge-bases/{id}/documents', {
            params: { path: { id: knowledgeBaseId }, query },
          })
        : await this.documents.GET('/v1/documents', {
            // externalIdPrefix is optional; the OpenAPI document marks it required (see ADR 37).
            params: { query: query as ListQuery },
          });
      if (!page) throw new Error(`listing documents failed: ${response.status}`);
      all.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  }

  /**
   * `onTimings`: called with the stages the service reports for the search (its `server-timing`
   * response header), when it reports any.
   */
  search(
    request: Partial<kbv1.SearchRequest>,
    onTimings?: (stages: StageTiming[]) => void,
  ): Promise<kbv1.SearchResponse> {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${this.endpoints.token}`);
    return new Promise((resolve, reject) => {
      const call = this.grpc.search(
        kbv1.SearchRequest.fromPartial(request),
        metadata,
        (error, response) => (error ? reject(error) : resolve(response)),
      );
      if (onTimings) {
        call.on('metadata', (headers: Metadata) => {
          const [value] = headers.get('server-timing');
          if (typeof value === 'string') onTimings(parseServerTiming(value));
        });
      }
    });
  }

  close(): void {
    this.grpcClient?.close();
  }
}

/** Runs `task` over `items` with at most `concurrency` in flight; results keep the input order. */
export async function mapPool<T, R>(
  items: T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** A token for the CLI's own runs (eval, bench), signed with the local AUTH_JWT_SECRET. */
export function localToken(claims: TokenClaims): Promise<string> {
  const secret = process.env['AUTH_JWT_SECRET'];
  if (!secret) {
    throw new Error('AUTH_JWT_SECRET is not set (source scripts/infra/env.sh, or pass a token)');
  }
  return mintToken(claims, secret, { ttlSeconds: 6 * 3600 });
}
