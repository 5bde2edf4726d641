import type { Readable } from 'node:stream';

import type { Access } from '@kb/auth';
import {
  type ExtractedText,
  extractedTextKey,
  extractedTextSchema,
  type TenantId,
} from '@kb/contracts';
import { type BlobStore, getJson } from '@kb/storage';
import { Inject, Injectable } from '@nestjs/common';

import type { DocumentRecord } from '../documents/document.model';
import { DocumentError, DocumentErrorCode } from '../documents/documents.errors';
import { DocumentsRepository, visibilityOf } from '../documents/documents.repository';
import { BLOB_STORE } from '../platform/tokens';
import { ifRangeHolds, rangeOf } from './byte-range';
import { DocumentContentError, DocumentContentErrorCode } from './document-content.errors';

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
  constructor(
    private readonly documents: DocumentsRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

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
    switch (request.kind) {
      case 'unsatisfiable':
        return { ...head, status: 416 };
      case 'partial':
        return {
          ...head,
          status: 206,
          range: request.range,
          body: await this.blobs.openRead(document.blobKey, request.range),
        };
      case 'whole':
        return { ...head, status: 200, body: await this.blobs.openRead(document.blobKey) };
    }
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
    const key = extractedTextKey(tenantId, id, version);
    if (!(await this.blobs.exists(key))) throw unavailable(document, version);
    const extracted = extractedTextSchema.parse(await getJson(this.blobs, key));
    const offset = Math.min(window.offset, extracted.text.length);
    const end = Math.min(offset + window.limit, extracted.text.length);
    return {
      documentId: id,
      version,
      title: document.title,
      contentType: document.contentType,
      format: extracted.format,
      length: extracted.text.length,
      offset,
      text: extracted.text.slice(offset, end),
      nextOffset: end < extracted.text.length ? end : null,
      pages: extracted.pages,
      headings: extracted.headings,
    };
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
