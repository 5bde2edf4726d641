import { credentials, Metadata } from '@grpc/grpc-js';
import { kbv1 } from '@kb/contracts';

/** A typed kb.v1 client for tests, benchmarks and scripts. */
export function kbClient(address: string): kbv1.KnowledgeBaseClient {
  return new kbv1.KnowledgeBaseClient(address, credentials.createInsecure());
}

export function grpcSearch(
  client: kbv1.KnowledgeBaseClient,
  token: string,
  request: Partial<kbv1.SearchRequest>,
): Promise<kbv1.SearchResponse> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) =>
    client.search(kbv1.SearchRequest.fromPartial(request), metadata, (error, response) =>
      error ? reject(error) : resolve(response),
    ),
  );
}

export function grpcRetrieveContext(
  client: kbv1.KnowledgeBaseClient,
  token: string,
  request: Partial<kbv1.RetrieveContextRequest>,
): Promise<kbv1.RetrieveContextResponse> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) =>
    client.retrieveContext(
      kbv1.RetrieveContextRequest.fromPartial(request),
      metadata,
      (error, response) => (error ? reject(error) : resolve(response)),
    ),
  );
}

export function grpcGetDocument(
  client: kbv1.KnowledgeBaseClient,
  token: string,
  documentId: string,
  options: Partial<kbv1.GetDocumentRequest> = {},
): Promise<kbv1.GetDocumentResponse> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) =>
    client.getDocument(
      kbv1.GetDocumentRequest.fromPartial({ documentId, ...options }),
      metadata,
      (error, response) => (error ? reject(error) : resolve(response)),
    ),
  );
}

/** Every message of a GetDocumentContent stream (rejects with the call's error). */
export async function grpcGetDocumentContent(
  client: kbv1.KnowledgeBaseClient,
  token: string,
  documentId: string,
): Promise<kbv1.GetDocumentContentResponse[]> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  const messages: kbv1.GetDocumentContentResponse[] = [];
  for await (const message of client.getDocumentContent({ documentId }, metadata)) {
    messages.push(message as kbv1.GetDocumentContentResponse);
  }
  return messages;
}

export function grpcListDocuments(
  client: kbv1.KnowledgeBaseClient,
  token: string,
  request: Partial<kbv1.ListDocumentsRequest>,
): Promise<kbv1.ListDocumentsResponse> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) =>
    client.listDocuments(
      kbv1.ListDocumentsRequest.fromPartial(request),
      metadata,
      (error, response) => (error ? reject(error) : resolve(response)),
    ),
  );
}
