import {
  Topics,
  type ChunkerConfig,
  type DocumentUploaded,
  type ParsedDocument,
  type TopicEnvelope,
} from '@kb/contracts';
import type { EventProducer } from '@kb/kafka';
import { withSpan } from '@kb/observability';
import { putJson, type BlobStore } from '@kb/storage';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { chunkDocument } from '../chunking/chunker';
import { markdownHeadings } from '../chunking/headings';
import type { TokenCounter } from '../chunking/token-counter';
import { PARSER_CONFIG, type ParserConfig } from '../config/parser.config';
import { BLOB_STORE, EVENT_PRODUCER, TOKEN_COUNTER } from '../platform/tokens';
import { extractText, type Format } from './extract-text';

/** Formats whose extracted text marks headings as Markdown `#` lines. */
const HEADED_FORMATS: ReadonlySet<Format> = new Set(['markdown', 'html', 'docx']);

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
    @Inject(TOKEN_COUNTER) private readonly tokens: TokenCounter,
  ) {}

  /** The knowledge base's chunker the event names, or this service's configured default. */
  chunkerFor(document: DocumentUploaded): ChunkerConfig {
    return (
      document.chunker ?? {
        strategy: 'recursive',
        size: this.config.CHUNK_SIZE,
        overlap: this.config.CHUNK_OVERLAP,
      }
    );
  }

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
    const { text, pages, format } = await extractText({
      filename: document.filename,
      contentType: document.contentType,
      body,
    });
    const headings = HEADED_FORMATS.has(format) ? markdownHeadings(text) : [];
    const parsed: ParsedDocument = {
      documentId,
      version,
      title: document.title,
      chunks: await chunkDocument(
        { text, headings, ...(pages ? { pages } : {}) },
        this.chunkerFor(document),
        this.tokens,
      ),
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
