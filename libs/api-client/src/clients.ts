import createClient, { type Client } from 'openapi-fetch';

import type { paths as AclPaths } from './generated/acl';
import type { paths as DocumentPaths } from './generated/document';
import type { paths as EmbeddingPaths } from './generated/embedding';
import type { paths as QueryPaths } from './generated/query';
import type { paths as WebhookPaths } from './generated/webhook';

export interface ApiClientOptions {
  /** The service's base URL, e.g. http://127.0.0.1:3001 */
  baseUrl: string;
  /** The caller's bearer token: the service applies its tenant, permissions and ACLs. */
  token?: string;
  /** A fetch to use instead of the global one (tests, instrumentation). */
  fetch?: typeof globalThis.fetch;
}

function apiClient<Paths extends object>(options: ApiClientOptions): Client<Paths> {
  return createClient<Paths>({
    baseUrl: options.baseUrl,
    headers: {
      accept: 'application/json',
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** document-service: documents, their content and text, knowledge bases, sources, stats. */
export const documentServiceClient = (options: ApiClientOptions): Client<DocumentPaths> =>
  apiClient<DocumentPaths>(options);

/** query-service: search, context, similar documents, rerank, the OpenAI-compatible endpoints. */
export const queryServiceClient = (options: ApiClientOptions): Client<QueryPaths> =>
  apiClient<QueryPaths>(options);

/** acl-service: groups, roles, policies and the audit log. */
export const aclServiceClient = (options: ApiClientOptions): Client<AclPaths> =>
  apiClient<AclPaths>(options);

/** webhook-service: webhooks and their deliveries. */
export const webhookServiceClient = (options: ApiClientOptions): Client<WebhookPaths> =>
  apiClient<WebhookPaths>(options);

/** embedding-service: the OpenAI-compatible embeddings endpoint. */
export const embeddingServiceClient = (options: ApiClientOptions): Client<EmbeddingPaths> =>
  apiClient<EmbeddingPaths>(options);

export type DocumentServiceClient = Client<DocumentPaths>;
export type QueryServiceClient = Client<QueryPaths>;
export type AclServiceClient = Client<AclPaths>;
export type WebhookServiceClient = Client<WebhookPaths>;
export type EmbeddingServiceClient = Client<EmbeddingPaths>;
