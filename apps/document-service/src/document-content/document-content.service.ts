import type { Readable } from 'node:stream';

import type { Access } from '@kb/auth';
import {
  type ExtractedText,
  extractedTextBodyKey,
  type ExtractedTextIndex,
  extractedTextIndexKey,
  extractedTextIndexSchema,
  extractedTextKey,
  extractedTextSchema,
  type TenantId,
  textRangeOf,
} from '@kb/contracts';
import { type BlobStore, getBounded, getRange, ObjectTooLargeError } from '@kb/storage';
import { Inject, Injectable, Optional } from '@nestjs/common';

import type { DocumentRecord } from '../documents/document.model';
import { DocumentAudit } from '../documents/document-audit';
import { DocumentError, DocumentErrorCode } from '../documents/documents.errors';
import { DocumentsRepository, visibilityOf } from '../documents/documents.repository';
import { BLOB_STORE } from '../platform/tokens';
import { ifRangeHolds, rangeOf } from './byte-range';
import { DocumentContentError, DocumentContentErrorCode } from './document-content.errors';

/**
 * Bounds of reading a text stored before review N6 (`text.json`, the whole text in one object):
 * such a read takes the whole object into memory, so at most `legacyMaxBytes` of it, and at most
 * `legacyConcurrency` of them at once in a process (others wait their turn). The index of a
 * windowed text is bounded by `indexMaxBytes` likewise (it holds the page and heading maps).
 */
export interface TextReadLimits {
  legacyMaxBytes: number;
  legacyConcurrency: number;
  indexMaxBytes: number;
}

export const TEXT_READ_LIMITS = Symbol('TEXT_READ_LIMITS');

export const DEFAULT_TEXT_READ_LIMITS: TextReadLimits = {
  legacyMaxBytes: 64 * 1024 * 1024,
  legacyConcurrency: 2,
  indexMaxBytes: 16 * 1024 * 1024,
};

/** How the original is answered: its headers, and a stream unless the range was unsatisfiable. */
export interface OriginalContent {
  status: 200 | 206 | 416;
  contentType: string;
  filename: string;
  /** The representation's size: the whole original's, whatever the range. */
  sizeBytes: number;
  /** The content's SHA-256, quoted: a strong entity tag. */
  etag: string;
  range?: { start: number; end: number };
  body?: Readable;
}

/** A window of a version's extracted text, with the maps that locate it. */
export interface DocumentText {
  documentId: string;
  version: number;
  title: string;
  contentType: string;
  format: string;
  /** The whole text's length in UTF-16 code units: the unit of every offset here and in hits. */
  length: number;
  offset: number;
  text: string;
  /** Where the next window starts; null when this one reaches the end. */
  nextOffset: number | null;
  pages: ExtractedText['pages'];
  headings: ExtractedText['headings'];
  /** What OCR read, when it read some pages (docs/adr/0050). */
  ocr?: ExtractedText['ocr'];
}

export interface TextWindow {
  offset: number;
  limit: number;
  /** A version of the document (hits name theirs); default the current one. */
  version?: number;
}

/**
 * What a document holds, for readers: the original as uploaded (streamed from S3, ranges
 * honoured) and the text parser-service extracted from it. A document the caller may not read is
 * `document_not_found`, exactly as for its metadata.
 */
@Injectable()
export class DocumentContentService {
  private readonly limits: TextReadLimits;
  private readonly legacyReads: Semaphore;

  constructor(
    private readonly documents: DocumentsRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly audit: DocumentAudit,
    @Optional() @Inject(TEXT_READ_LIMITS) limits?: Partial<TextReadLimits>,
  ) {
    this.limits = { ...DEFAULT_TEXT_READ_LIMITS, ...limits };
    this.legacyReads = new Semaphore(this.limits.legacyConcurrency);
  }

  async original(
    tenantId: TenantId,
    access: Access,
    id: string,
    conditions: { range?: string; ifRange?: string } = {},
  ): Promise<OriginalContent> {
    const document = await this.readable(tenantId, access, id);
    const etag = `"${document.sha256}"`;
    const head = {
      contentType: document.contentType,
      filename: document.filename,
      sizeBytes: document.sizeBytes,
      etag,
    };
    const request = ifRangeHolds(conditions.ifRange, etag)
      ? rangeOf(conditions.range, document.sizeBytes)
      : ({ kind: 'whole' } as const);
    // An unsatisfiable range served nothing: like a refused read, it leaves no record.
    if (request.kind === 'unsatisfiable') return { ...head, status: 416 };
    const range = request.kind === 'partial' ? request.range : undefined;
    // Audited before a byte goes out (review L5), as `document_read` of the original.
    await this.audit.read('document_read', access, [id], {
      version: document.version,
      part: 'content',
      ...(range ? { range: `${range.start}-${range.end}` } : {}),
    });
    return range
      ? { ...head, status: 206, range, body: await this.blobs.openRead(document.blobKey, range) }
      : { ...head, status: 200, body: await this.blobs.openRead(document.blobKey) };
  }

  async text(
    tenantId: TenantId,
    access: Access,
    id: string,
    window: TextWindow,
  ): Promise<DocumentText> {
    const document = await this.readable(tenantId, access, id);
    const version = window.version ?? document.version;
    if (version > document.version) {
      throw new DocumentContentError(
        DocumentContentErrorCode.VersionNotFound,
        `document ${id} has no version ${version} (current: ${document.version})`,
      );
    }
    const stored = await this.windowOf(tenantId, document, version, window);
    await this.audit.read('document_read', access, [id], {
      version,
      part: 'text',
      offset: stored.offset,
      length: stored.text.length,
    });
    return {
      documentId: id,
      version,
      title: document.title,
      contentType: document.contentType,
      ...stored,
    };
  }

  /**
   * The window of a version's text, read as it was stored: a range of `text.txt` through its
   * index (review N6), or, for a version parsed before that, from the whole `text.json`, within
   * `TextReadLimits`.
   */
  private async windowOf(
    tenantId: TenantId,
    document: DocumentRecord,
    version: number,
    window: TextWindow,
  ): Promise<Omit<DocumentText, 'documentId' | 'version' | 'title' | 'contentType'>> {
    const indexKey = extractedTextIndexKey(tenantId, document.id, version);
    if (await this.blobs.exists(indexKey)) {
      const index = await this.indexAt(document, version, indexKey);
      const offset = Math.min(window.offset, index.length);
      const end = Math.min(offset + window.limit, index.length);
      const range = textRangeOf(index, offset, end);
      let text = '';
      if (range) {
        const bytes = await getRange(
          this.blobs,
          extractedTextBodyKey(tenantId, document.id, version),
          { start: range.startByte, end: range.endByte - 1 },
        );
        text = bytes.toString('utf8').slice(offset - range.firstUnit, end - range.firstUnit);
      }
      return {
        format: index.format,
        length: index.length,
        offset,
        text,
        nextOffset: end < index.length ? end : null,
        pages: index.pages,
        headings: index.headings,
        ...(index.ocr ? { ocr: index.ocr } : {}),
      };
    }
    const legacyKey = extractedTextKey(tenantId, document.id, version);
    if (!(await this.blobs.exists(legacyKey))) throw unavailable(document, version);
    const extracted = await this.legacyReads.run(() =>
      this.legacyText(document, version, legacyKey),
    );
    const offset = Math.min(window.offset, extracted.text.length);
    const end = Math.min(offset + window.limit, extracted.text.length);
    return {
      format: extracted.format,
      length: extracted.text.length,
      offset,
      text: extracted.text.slice(offset, end),
      nextOffset: end < extracted.text.length ? end : null,
      pages: extracted.pages,
      headings: extracted.headings,
    };
  }

  private async indexAt(
    document: DocumentRecord,
    version: number,
    key: string,
  ): Promise<ExtractedTextIndex> {
    const bytes = await this.bounded(document, version, key, this.limits.indexMaxBytes);
    return extractedTextIndexSchema.parse(JSON.parse(bytes.toString('utf8')));
  }

  /** A text stored whole before review N6: read whole, at most `legacyMaxBytes` of it. */
  private async legacyText(
    document: DocumentRecord,
    version: number,
    key: string,
  ): Promise<ExtractedText> {
    const bytes = await this.bounded(document, version, key, this.limits.legacyMaxBytes);
    return extractedTextSchema.parse(JSON.parse(bytes.toString('utf8')));
  }

  private async bounded(
    document: DocumentRecord,
    version: number,
    key: string,
    maxBytes: number,
  ): Promise<Buffer> {
    try {
      return await getBounded(this.blobs, key, maxBytes);
    } catch (error) {
      if (!(error instanceof ObjectTooLargeError)) throw error;
      throw new DocumentContentError(
        DocumentContentErrorCode.TextTooLarge,
        `document ${document.id} v${version} has an extracted text stored whole before texts ` +
          `were stored in windows, over the ${maxBytes} bytes read at once; upload the content ` +
          'again to store it in windows',
      );
    }
  }

  private async readable(tenantId: TenantId, access: Access, id: string): Promise<DocumentRecord> {
    const document = await this.documents.findById(tenantId, id, visibilityOf(access));
    if (!document) throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
    return document;
  }
}

/** Says why a version has no stored text, so the caller knows whether waiting helps. */
function unavailable(document: DocumentRecord, version: number): DocumentContentError {
  const current = version === document.version;
  const why =
    current && document.status === 'failed'
      ? `it failed (${document.failure?.reason ?? 'unknown reason'})`
      : current && ['pending', 'parsing'].includes(document.status)
        ? `it is not parsed yet (status ${document.status}); retry later`
        : 'it was parsed before extracted texts were kept; upload the content again to extract it';
  return new DocumentContentError(
    DocumentContentErrorCode.TextNotAvailable,
    `document ${document.id} v${version} has no extracted text: ${why}`,
  );
}

/** At most `limit` tasks at once; the others wait, first come first served. */
class Semaphore {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // The slot passes to the next waiter as it is; otherwise it is freed.
      if (next) next();
      else this.running -= 1;
    }
  }
}
