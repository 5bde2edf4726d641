import {
  combineParsingSettings,
  type DocumentUploaded,
  type ExtractedText,
  extractedTextBodyKey,
  extractedTextIndexKey,
  type InlineOrRef,
  type ParsedDocument,
  textLayoutOf,
  type TopicEnvelope,
  Topics,
} from '@kb/contracts';
import {
  checkIn,
  type EventProducer,
  keyOfTenant,
  originalPrefixes,
  PermanentError,
  spaceOfTenant,
} from '@kb/kafka';
import { withSpan } from '@kb/observability';
import { type BlobStore, getBounded, ObjectTooLargeError, putJson } from '@kb/storage';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { chunkerForCode } from '../chunking/code-separators.config';
import { chunkDocument } from '../chunking/document.chunker';
import { markdownHeadings } from '../chunking/headings.parser';
import type { TokenCounter } from '../chunking/token.counter';
import { PARSER_CONFIG, type ParserConfig } from '../config/parser.config';
import { BLOB_STORE, EVENT_PRODUCER, TEXT_EXTRACTOR, TOKEN_COUNTER } from '../platform/tokens';
import { storeAttachments } from './attachment.store';
import type { Format, TextExtractor } from './extraction.model';
import { piiModeOf, screenPii } from './pii.screen';

/** Formats whose extracted text marks headings as Markdown `#` lines. */
const HEADED_FORMATS: ReadonlySet<Format> = new Set([
  'markdown',
  'html',
  'docx',
  'xlsx',
  'pptx',
  'odt',
  'ods',
  'odp',
  'epub',
  'eml',
]);

/** Where the chunks of one document version for one chunker are stored when too large to carry. */
export const chunksKey = (
  tenantId: string,
  documentId: string,
  version: number,
  chunker: string,
): string => `derived/${tenantId}/${documentId}/v${version}/chunks.${chunker}.json`;

@Injectable()
export class ParsingService {
  private readonly logger = new Logger(ParsingService.name);

  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(EVENT_PRODUCER) private readonly producer: EventProducer,
    @Inject(TOKEN_COUNTER) private readonly tokens: TokenCounter,
    @Inject(TEXT_EXTRACTOR) private readonly extractor: TextExtractor,
    @Inject(PARSER_CONFIG)
    private readonly config: Pick<
      ParserConfig,
      'PARSER_MAX_INPUT_BYTES' | 'PARSER_MAX_ATTACHMENTS'
    >,
  ) {}

  /**
   * The original, refused as `too_large` past PARSER_MAX_INPUT_BYTES before it is buffered: by
   * the size its event states, and again while it streams in (the event is not trusted to be
   * right).
   */
  private async readOriginal(document: DocumentUploaded): Promise<Buffer> {
    const max = this.config.PARSER_MAX_INPUT_BYTES;
    const tooLarge = () =>
      new PermanentError('too_large', `the original is larger than the parser's ${max} bytes`);
    if (document.sizeBytes > max) throw tooLarge();
    try {
      return await getBounded(this.blobs, document.blob.key, max);
    } catch (error) {
      if (error instanceof ObjectTooLargeError) throw tooLarge();
      throw error;
    }
  }

  /**
   * A mail's attachments are read as files of their own unless it is itself an attachment
   * (nested mails one level deep) or PARSER_MAX_ATTACHMENTS is 0 (docs/adr/0048).
   */
  private attachmentLimitsFor(document: DocumentUploaded) {
    const max = this.config.PARSER_MAX_ATTACHMENTS;
    if (document.attachedTo || max === 0) return {};
    return { attachments: { max, maxBytes: this.config.PARSER_MAX_INPUT_BYTES } };
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
    const { pipelines } = document;
    // The original read and the spaces named must be this tenant's (dead-lettered otherwise).
    keyOfTenant(document.blob.key, originalPrefixes(tenantId), 'parse_error');
    for (const pipeline of pipelines) spaceOfTenant(tenantId, pipeline.space, 'parse_error');
    await this.producer.publish({
      topic: Topics.documentStatus,
      tenantId,
      key: documentId,
      payload: { documentId, version, status: 'parsing' },
    });
    const body = await this.readOriginal(document);
    // Extracted once for all its knowledge bases: their settings combined (docs/adr/0050).
    const settings = combineParsingSettings(pipelines.map((pipeline) => pipeline.parsing));
    const extraction = await this.extractor.extract({
      filename: document.filename,
      contentType: document.contentType,
      body,
      ...(settings ? { settings } : {}),
      ...this.attachmentLimitsFor(document),
    });
    const { format, language, ocr } = extraction;
    // The knowledge bases' PII setting (ADR 51): with `redact`, the redacted text is what is
    // stored, chunked and embedded (the original in S3 stays as uploaded). Findings go back to
    // document-service on a second `parsing` status event.
    const { text, pages } = await screenPii(
      piiModeOf(document),
      extraction,
      document.attributes.knowledgeBaseIds,
      (pii) =>
        this.producer.publish({
          topic: Topics.documentStatus,
          tenantId,
          key: documentId,
          payload: { documentId, version, status: 'parsing', pii },
        }),
    );
    const headings = HEADED_FORMATS.has(format) ? markdownHeadings(text) : [];
    // Kept once per version, so readers can fetch the text every chunk offset points into.
    const extracted: ExtractedText = {
      documentId,
      version,
      format,
      text,
      pages: pages ?? [],
      headings,
      ...(ocr ? { ocr } : {}),
    };
    if (ocr?.pages.some((page) => page.flagged)) {
      const flagged = ocr.pages.filter((page) => page.flagged).map((page) => page.page);
      this.logger.warn(
        `document ${documentId} v${version}: OCR page(s) ${flagged.join(', ')} under confidence ${ocr.minConfidence}, left out`,
      );
    }
    // Stored as UTF-8 plus an index of its blocks (review N6): a reader range-reads the window it
    // serves. The text first, then the index: a reader takes the index as the sign the text is in.
    const layout = textLayoutOf(extracted);
    await this.blobs.put(
      extractedTextBodyKey(tenantId, documentId, version),
      layout.body,
      'text/plain; charset=utf-8',
    );
    await putJson(this.blobs, extractedTextIndexKey(tenantId, documentId, version), layout.index);
    if (extraction.attachments) {
      // Stored, then reported: document-service makes each a document linked to the mail.
      const attachments = await storeAttachments(
        this.blobs,
        tenantId,
        document,
        extraction.attachments,
      );
      await this.producer.publish({
        topic: Topics.documentStatus,
        tenantId,
        key: documentId,
        payload: { documentId, version, status: 'parsing', attachments },
      });
    }
    const versionSpaces = pipelines.map((p) => p.space);
    // Chunked once per distinct chunker; each pipeline gets its own event, so each model embeds.
    const chunkings = new Map<
      string,
      { claim: InlineOrRef<ParsedDocument>; parsed: ParsedDocument }
    >();
    let first: ParsedDocument | undefined;
    for (const pipeline of pipelines) {
      const chunkerId = JSON.stringify(pipeline.chunker);
      let chunking = chunkings.get(chunkerId);
      if (!chunking) {
        const parsed: ParsedDocument = {
          documentId,
          version,
          title: document.title,
          chunks: await chunkDocument(
            { text, headings, ...(pages ? { pages } : {}) },
            format === 'code' ? chunkerForCode(pipeline.chunker, language) : pipeline.chunker,
            this.tokens,
          ),
        };
        // Carried in the event when small (most documents), stored in S3 when not (ADR 4).
        const key = chunksKey(tenantId, documentId, version, pipeline.key);
        chunking = { claim: await checkIn(this.blobs, key, parsed), parsed };
        chunkings.set(chunkerId, chunking);
      }
      first ??= chunking.parsed;
      await this.producer.publish({
        topic: Topics.documentParsed,
        tenantId,
        key: documentId,
        payload: {
          documentId,
          version,
          title: document.title,
          chunkCount: chunking.parsed.chunks.length,
          chunks: chunking.claim,
          attributes: document.attributes,
          pipeline: {
            key: pipeline.key,
            model: pipeline.model,
            space: pipeline.space,
            knowledgeBaseIds: pipeline.knowledgeBaseIds,
            versionSpaces,
          },
        },
      });
    }
    const parsed = first!;
    this.logger.log(
      `parsed document ${documentId} v${version}: ${parsed.chunks.length} chunks, ${pipelines.length} pipeline(s)`,
    );
    return parsed;
  }
}
