import type { DocumentTextWindow, DocumentView } from '@kb/api-client';
import type { Caller } from '@kb/auth';
import type { kbv1 } from '@kb/contracts';
import { GrpcService } from '@kb/grpc';
import { Authenticated, CurrentCaller, parseBody } from '@kb/http';
import { GrpcMethod, Payload } from '@nestjs/microservices';
import { from, type Observable } from 'rxjs';
import { z } from 'zod';

import { type DocumentContentStream, DocumentsClient } from './documents.client';

const documentId = z.uuid({ version: 'v4', error: 'document_id must be a UUID' });
const getDocumentSchema = z.object({
  documentId,
  includeText: z.boolean(),
  textOffset: z.number().int().min(0),
  textLimit: z
    .number()
    .int()
    .max(200_000, 'text_limit must be at most 200000')
    .transform((n) => (n === 0 ? 20_000 : n)),
});
/** What one streamed message of an original carries at most. */
export const CONTENT_MESSAGE_BYTES = 64 * 1024;
const listDocumentsSchema = z.object({
  pageSize: z
    .number()
    .int()
    .max(1000, 'page_size must be at most 1000')
    .transform((n) => (n === 0 ? 100 : n)),
  pageToken: z
    .string()
    .max(1000)
    .transform((t) => t || undefined),
  // Checked by document-service, which answers invalid_filter (relayed as INVALID_ARGUMENT).
  filterJson: z
    .string()
    .max(16_384)
    .transform((t) => t || undefined),
  knowledgeBaseId: z
    .string()
    .max(63)
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
    const request = parseBody(getDocumentSchema, {
      documentId: message.documentId,
      includeText: message.includeText,
      textOffset: message.textOffset,
      textLimit: message.textLimit,
    });
    const document = toDocument(await this.documents.get(caller, request.documentId));
    if (!request.includeText) return { document, text: undefined };
    const text = await this.documents.text(caller, request.documentId, {
      offset: request.textOffset,
      limit: request.textLimit,
    });
    return { document, text: toText(text) };
  }

  /** The original, relayed from document-service as it arrives, in messages of 64 KiB at most. */
  @GrpcMethod('KnowledgeBase', 'GetDocumentContent')
  @Authenticated()
  async content(
    @Payload() message: kbv1.GetDocumentContentRequest,
    @CurrentCaller() caller: Caller,
  ): Promise<Observable<kbv1.GetDocumentContentResponse>> {
    const { id } = parseBody(z.object({ id: documentId }), { id: message.documentId });
    return from(contentMessages(await this.documents.openContent(caller, id)));
  }

  @GrpcMethod('KnowledgeBase', 'ListDocuments')
  @Authenticated()
  async list(
    @Payload() message: kbv1.ListDocumentsRequest,
    @CurrentCaller() caller: Caller,
  ): Promise<kbv1.ListDocumentsResponse> {
    const { pageSize, pageToken, filterJson, knowledgeBaseId } = parseBody(listDocumentsSchema, {
      pageSize: message.pageSize,
      pageToken: message.pageToken,
      filterJson: message.filterJson,
      knowledgeBaseId: message.knowledgeBaseId,
    });
    const page = await this.documents.list(caller, pageSize, pageToken, {
      where: filterJson,
      knowledgeBaseId,
    });
    return { documents: page.items.map(toDocument), nextPageToken: page.nextCursor ?? '' };
  }
}

/** The first message names the content; every message carries at most CONTENT_MESSAGE_BYTES. */
export async function* contentMessages(
  content: DocumentContentStream,
): AsyncGenerator<kbv1.GetDocumentContentResponse> {
  let first = true;
  const head = () => {
    if (!first) return { contentType: '', sizeBytes: 0, sha256: '', filename: '' };
    first = false;
    const { contentType, sizeBytes, sha256, filename } = content;
    return { contentType, sizeBytes, sha256, filename };
  };
  for await (const part of content.body) {
    for (let at = 0; at < part.byteLength; at += CONTENT_MESSAGE_BYTES) {
      const data = Buffer.from(part.subarray(at, at + CONTENT_MESSAGE_BYTES));
      yield { data, ...head() };
    }
  }
  // An empty original still names itself.
  if (first) yield { data: Buffer.alloc(0), ...head() };
}

function toText(record: DocumentTextWindow): kbv1.DocumentText {
  return {
    version: record.version,
    format: record.format,
    length: record.length,
    offset: record.offset,
    text: record.text,
    ...(record.nextOffset !== null ? { nextOffset: record.nextOffset } : {}),
    pages: record.pages,
    headings: record.headings,
  };
}

function toDocument(record: DocumentView): kbv1.Document {
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
