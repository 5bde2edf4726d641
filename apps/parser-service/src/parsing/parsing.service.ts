import {
  Topics,
  type DocumentUploaded,
  type ParsedDocument,
  type TopicEnvelope,
} from '@kb/contracts';
import type { EventProducer } from '@kb/kafka';
import { withSpan } from '@kb/observability';
import { putJson, type BlobStore } from '@kb/storage';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { recursiveChunkSpans, toChunks } from '../chunking/chunker';
import { PARSER_CONFIG, type ParserConfig } from '../config/parser.config';
import { BLOB_STORE, EVENT_PRODUCER } from '../platform/tokens';
import { extractText } from './extract-text';

/** Where the parse output of one document version is stored (claim check). */
export const chunksKey = (tenantId: string, documentId: string, version: number): string =>
  `derived/${tenantId}/${documentId}/v${version}/chunks.json`;

@Injectable()
export class ParsingService {
  private readonly logger = new Logger(ParsingService.name);

  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(EVENT_PRODUCER) private readonly producer: EventProducer,
    @Inject(PARSER_CONFIG) private readonly config: ParserConfig,
  ) {}

  async onDocumentEvent(event: TopicEnvelope<typeof Topics.document>): Promise<void> {
    if (event.payload.kind === 'uploaded') {
      await this.parse(event.tenantId, event.payload);
    }
  }

  /** Extracts and chunks one document version. Deterministic, so a replay rewrites the same output. */
  async parse(tenantId: string, document: DocumentUploaded): Promise<ParsedDocument> {
    return withSpan(
      'kb.parse',
      {
        'kb.tenant_id': tenantId,
        'kb.document_id': document.documentId,
        'kb.version': document.version,
      },
      () => this.parseInSpan(tenantId, document),
    );
  }

  private async parseInSpan(tenantId: string, document: DocumentUploaded): Promise<ParsedDocument> {
    const { documentId, version } = document;
    await this.producer.publish({
      topic: Topics.documentStatus,
      tenantId,
      key: documentId,
      payload: { documentId, version, status: 'parsing' },
    });
    const body = await this.blobs.get(document.blob.key);
    const { text, pages } = await extractText({
      filename: document.filename,
      contentType: document.contentType,
      body,
    });
    const spans = recursiveChunkSpans(text, {
      chunkSize: this.config.CHUNK_SIZE,
      chunkOverlap: this.config.CHUNK_OVERLAP,
    });
    const parsed: ParsedDocument = {
      documentId,
      version,
      title: document.title,
      chunks: toChunks(text, spans).map((chunk) => {
        const page = pages?.find((p) => chunk.start >= p.start && chunk.start <= p.end)?.page;
        return page ? { ...chunk, page } : chunk;
      }),
    };
    const key = chunksKey(tenantId, documentId, version);
    await putJson(this.blobs, key, parsed);
    await this.producer.publish({
      topic: Topics.documentParsed,
      tenantId,
      key: documentId,
      payload: {
        documentId,
        version,
        title: document.title,
        chunkCount: parsed.chunks.length,
        chunks: { bucket: this.blobs.bucket, key },
        attributes: document.attributes,
      },
    });
    this.logger.log(`parsed document ${documentId} v${version}: ${parsed.chunks.length} chunks`);
    return parsed;
  }
}
