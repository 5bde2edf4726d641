import type { Caller } from '@kb/auth';
import type { kbv1 } from '@kb/contracts';
import { GrpcService } from '@kb/grpc';
import { Authenticated, CurrentCaller, parseBody } from '@kb/http';
import { GrpcMethod, Payload } from '@nestjs/microservices';
import { z } from 'zod';

import { type DocumentRecord, DocumentsClient } from './documents.client';

const getDocumentSchema = z.object({
  documentId: z.uuid({ version: 'v4', error: 'document_id must be a UUID' }),
});
const listDocumentsSchema = z.object({
  pageSize: z
    .number()
    .int()
    .max(100, 'page_size must be at most 100')
    .transform((n) => (n === 0 ? 20 : n)),
  pageToken: z
    .string()
    .max(512)
    .transform((t) => t || undefined),
});

/**
 * `kb.v1.KnowledgeBase/GetDocument` and `ListDocuments`, read from document-service with the
 * caller's own token: it applies their permissions and ACLs, so only authentication happens here.
 */
@GrpcService()
export class DocumentsGrpcController {
  constructor(private readonly documents: DocumentsClient) {}

  @GrpcMethod('KnowledgeBase', 'GetDocument')
  @Authenticated()
  async get(
    @Payload() message: kbv1.GetDocumentRequest,
    @CurrentCaller() caller: Caller,
  ): Promise<kbv1.GetDocumentResponse> {
    const { documentId } = parseBody(getDocumentSchema, { documentId: message.documentId });
    return { document: toDocument(await this.documents.get(caller, documentId)) };
  }

  @GrpcMethod('KnowledgeBase', 'ListDocuments')
  @Authenticated()
  async list(
    @Payload() message: kbv1.ListDocumentsRequest,
    @CurrentCaller() caller: Caller,
  ): Promise<kbv1.ListDocumentsResponse> {
    const { pageSize, pageToken } = parseBody(listDocumentsSchema, {
      pageSize: message.pageSize,
      pageToken: message.pageToken,
    });
    const page = await this.documents.list(caller, pageSize, pageToken);
    return { documents: page.items.map(toDocument), nextPageToken: page.nextCursor ?? '' };
  }
}

function toDocument(record: DocumentRecord): kbv1.Document {
  return {
    id: record.id,
    title: record.title,
    filename: record.filename,
    contentType: record.contentType,
    sizeBytes: record.sizeBytes,
    sha256: record.sha256,
    version: record.version,
    status: record.status,
    failureReason: record.failure?.reason ?? '',
    failureDetail: record.failure?.detail ?? '',
    chunkCount: record.chunkCount ?? 0,
    metadata: record.metadata,
    tags: record.tags,
    knowledgeBaseIds: record.knowledgeBaseIds,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}
