import { credentials, Metadata } from '@grpc/grpc-js';
import { mintToken, type TokenClaims } from '@kb/auth';
import { kbv1 } from '@kb/contracts';
import { parseServerTiming, type StageTiming } from '@kb/observability/server-timing';

export interface KbEndpoints {
  documentsUrl: string;
  grpcAddress: string;
  /** The caller's bearer token (`kb token` mints one); it names the tenant. */
  token: string;
}

export interface UploadedDocument {
  id: string;
  status: string;
}

export interface DocumentSummary {
  id: string;
  status: string;
  failure: { reason: string; detail: string | null } | null;
  metadata: Record<string, unknown>;
  chunkCount: number | null;
  filename?: string;
}

/** The public APIs as a caller sees them: REST for documents, gRPC for search. */
export class KbClient {
  private grpcClient?: kbv1.KnowledgeBaseClient;

  constructor(private readonly endpoints: KbEndpoints) {}

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
    const form = new FormData();
    form.append('file', new Blob([content]), filename);
    if (fields.title) form.append('title', fields.title);
    if (fields.metadata) form.append('metadata', JSON.stringify(fields.metadata));
    if (fields.tags) form.append('tags', JSON.stringify(fields.tags));
    if (fields.acl) form.append('acl', JSON.stringify(fields.acl));
    if (fields.knowledgeBaseIds) {
      form.append('knowledgeBaseIds', JSON.stringify(fields.knowledgeBaseIds));
    }
    const response = await this.postUpload(form);
    const body = (await response.json()) as UploadedDocument & {
      error?: { code: string; message: string };
    };
    if (!response.ok)
      throw new Error(
        `upload of ${filename} failed: ${response.status} ${body.error?.code}: ${body.error?.message}`,
      );
    return body;
  }

  /**
   * POST /v1/documents. A busy suite may answer 503 (a dependency it asks first did not answer in
   * time): nothing was stored, so the upload is tried again, up to five times, with growing pauses.
   */
  private async postUpload(form: FormData): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${this.endpoints.documentsUrl}/v1/documents`, {
        method: 'POST',
        body: form,
        headers: { authorization: `Bearer ${this.endpoints.token}` },
      });
      if (response.status !== 503 || attempt === 5) return response;
      await response.body?.cancel();
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
    | {
        ok: true;
        document: UploadedDocument & { duplicate?: boolean; unchanged?: boolean; version?: number };
      }
    | { ok: false; status: number; code: string; message: string }
  > {
    const form = new FormData();
    form.append('file', new Blob([content], { type: contentType }), filename);
    if (fields.title) form.append('title', fields.title);
    if (fields.knowledgeBaseIds) {
      form.append('knowledgeBaseIds', JSON.stringify(fields.knowledgeBaseIds));
    }
    if (fields.externalId) form.append('externalId', fields.externalId);
    const response = await this.postUpload(form);
    const body = (await response.json().catch(() => ({}))) as UploadedDocument & {
      duplicate?: boolean;
      unchanged?: boolean;
      version?: number;
      error?: { code: string; message: string };
    };
    return response.ok
      ? { ok: true, document: body }
      : {
          ok: false,
          status: response.status,
          code: body.error?.code ?? 'http_error',
          message: body.error?.message ?? `HTTP ${response.status}`,
        };
  }

  /** Creates a knowledge base (the default pipeline unless given). */
  async createKnowledgeBase(
    id: string,
    name: string,
    pipeline: { embeddingModel?: string } = {},
  ): Promise<void> {
    const response = await fetch(`${this.endpoints.documentsUrl}/v1/knowledge-bases`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.endpoints.token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ id, name, ...pipeline }),
    });
    if (!response.ok) {
      throw new Error(
        `creating knowledge base ${id} failed: ${response.status} ${await response.text()}`,
      );
    }
  }

  async getDocument(id: string): Promise<DocumentSummary> {
    const response = await fetch(`${this.endpoints.documentsUrl}/v1/documents/${id}`, {
      headers: { authorization: `Bearer ${this.endpoints.token}` },
    });
    if (!response.ok) throw new Error(`reading document ${id} failed: ${response.status}`);
    return (await response.json()) as DocumentSummary;
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
      const url = new URL(`${this.endpoints.documentsUrl}/v1/documents`);
      url.searchParams.set('externalIdPrefix', prefix);
      url.searchParams.set('limit', '1000');
      if (cursor) url.searchParams.set('cursor', cursor);
      const response = await fetch(url, {
        headers: { authorization: `Bearer ${this.endpoints.token}` },
      });
      if (!response.ok) throw new Error(`listing documents failed: ${response.status}`);
      const page = (await response.json()) as {
        items: Array<{ id: string; externalId: string; sha256: string }>;
        nextCursor?: string | null;
      };
      items.push(...page.items);
      cursor = page.nextCursor ?? null;
    } while (cursor);
    return items;
  }

  /** Deletes a document; the API's error code instead of a throw. */
  async tryDelete(id: string): Promise<{ ok: true } | { ok: false; code: string }> {
    const response = await fetch(`${this.endpoints.documentsUrl}/v1/documents/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${this.endpoints.token}` },
    });
    if (response.ok) return { ok: true };
    const body = (await response.json().catch(() => ({}))) as { error?: { code: string } };
    return { ok: false, code: body.error?.code ?? `http_${response.status}` };
  }

  /** A source (`kb sync --source`): its knowledge base, external id prefix and globs. */
  async getSource(id: string): Promise<{
    knowledgeBaseId: string;
    externalIdPrefix: string;
    include: string[];
    exclude: string[];
  }> {
    const response = await fetch(`${this.endpoints.documentsUrl}/v1/sources/${id}`, {
      headers: { authorization: `Bearer ${this.endpoints.token}` },
    });
    if (!response.ok) throw new Error(`reading source ${id} failed: ${response.status}`);
    return (await response.json()) as {
      knowledgeBaseId: string;
      externalIdPrefix: string;
      include: string[];
      exclude: string[];
    };
  }

  /** Every document of the tenant, following the cursor. */
  /** Every document the caller may read, or those of one knowledge base. */
  async listAll(knowledgeBaseId?: string): Promise<DocumentSummary[]> {
    const all: DocumentSummary[] = [];
    let cursor: string | null = null;
    do {
      const url = new URL(
        knowledgeBaseId
          ? `${this.endpoints.documentsUrl}/v1/knowledge-bases/${encodeURIComponent(knowledgeBaseId)}/documents`
          : `${this.endpoints.documentsUrl}/v1/documents`,
      );
      url.searchParams.set('limit', '100');
      if (cursor) url.searchParams.set('cursor', cursor);
      const response = await fetch(url, {
        headers: { authorization: `Bearer ${this.endpoints.token}` },
      });
      if (!response.ok) throw new Error(`listing documents failed: ${response.status}`);
      const page = (await response.json()) as {
        items: DocumentSummary[];
        nextCursor: string | null;
      };
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
