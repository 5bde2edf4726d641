import type { operations as DocumentOperations } from './generated/document';
import type { operations as QueryOperations } from './generated/query';
import type { operations as WebhookOperations } from './generated/webhook';

/** The JSON body an operation answers with `Status` (its success status by default). */
export type JsonOf<
  Operation extends { responses: object },
  Status extends keyof Operation['responses'] = 200 & keyof Operation['responses'],
> = Operation['responses'][Status] extends { content: { 'application/json': infer Body } }
  ? Body
  : never;

/** The JSON body an operation takes. */
export type JsonBodyOf<Operation> = Operation extends {
  requestBody?: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

/** The query parameters an operation takes. */
export type QueryOf<Operation> = Operation extends { parameters: { query?: infer Query } }
  ? NonNullable<Query>
  : never;

// Names for the bodies callers hold on to, all derived from the generated types.

/** A document as document-service shows it (`GET /v1/documents/{id}`). */
export type DocumentView = JsonOf<DocumentOperations['getDocument']>;
/** A page of documents (`GET /v1/documents`, `GET /v1/knowledge-bases/{id}/documents`). */
export type DocumentPage = JsonOf<DocumentOperations['listDocuments']>;
/** A window of a document's extracted text and its maps (`GET /v1/documents/{id}/text`). */
export type DocumentTextWindow = JsonOf<DocumentOperations['getDocumentText']>;
/** What an upload answers (202 for a new document or version, 200 for a duplicate). */
export type UploadedDocument =
  | JsonOf<DocumentOperations['uploadDocument'], 202>
  | JsonOf<DocumentOperations['uploadDocument'], 200>;
/** A knowledge base (`GET /v1/knowledge-bases/{id}`). */
export type KnowledgeBaseView = JsonOf<DocumentOperations['getKnowledgeBase']>;
/** The limits in force for a tenant and its knowledge bases (`GET /v1/quotas`). */
export type QuotasView = JsonOf<DocumentOperations['getQuotas']>;
/** A page of knowledge bases (`GET /v1/knowledge-bases`). */
export type KnowledgeBasePage = JsonOf<DocumentOperations['listKnowledgeBases']>;
/** A source (`GET /v1/sources/{id}`). */
export type SourceView = JsonOf<DocumentOperations['getSource']>;

/** `POST /v1/search`: the request and the answer. */
export type SearchBody = JsonBodyOf<QueryOperations['search']>;
export type SearchAnswer = JsonOf<QueryOperations['search']>;
/** `POST /v1/context`: the request and the answer. */
export type ContextBody = JsonBodyOf<QueryOperations['retrieveContext']>;
export type ContextAnswer = JsonOf<QueryOperations['retrieveContext']>;

/** A webhook as webhook-service shows it (`GET /v1/webhooks/{id}`). */
export type WebhookView = JsonOf<WebhookOperations['getWebhook']>;
/** A delivery of a webhook with its attempts (`GET /v1/webhooks/{id}/deliveries`). */
export type WebhookDelivery = JsonOf<WebhookOperations['listWebhookDeliveries']>['items'][number];
