import { STATUS_RANK } from './document.model';
import type {
  DocumentMetadata,
  DocumentStatusChanged,
  EditableAttributes,
  TenantId,
} from '@kb/contracts';
import { annotateActiveSpan, meter } from '@kb/observability';
import type { BlobStore } from '@kb/storage';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { OutboxRelay } from '../outbox/outbox.relay';
import { BLOB_STORE, CLOCK, type Clock } from '../platform/tokens';
import type { Access, Action } from '@kb/auth';
import type { DeleteResult, DocumentAcl, DocumentView } from './document.model';
import { DocumentError, DocumentErrorCode } from './documents.errors';
import { DocumentsRepository, type Visibility } from './documents.repository';
import { DEFAULT_KNOWLEDGE_BASE, KnowledgeBases } from '../knowledge-bases/knowledge-bases';

/** What a caller may see among the tenant's documents. */
const visibilityOf = (access: Access): Visibility => (access.isAdmin ? 'all' : access.principals);

function requireAction(access: Access, action: Action): void {
  if (!access.documentActions.has(action)) {
    throw new DocumentError(
      DocumentErrorCode.PermissionDenied,
      `${action} on documents is not granted to ${access.userId}`,
    );
  }
}

/** An upload spooled to a temporary file by the HTTP layer: never held in memory whole. */
export interface UploadedFile {
  path: string;
  originalname: string;
  mimetype: string;
  size: number;
}

export interface UploadFields {
  title?: string;
  acl?: DocumentAcl;
  metadata?: DocumentMetadata;
  tags?: string[];
  knowledgeBaseIds?: string[];
}

export interface DocumentPage {
  items: DocumentView[];
  nextCursor: string | null;
}

const uploads = meter().createCounter('kb_documents_uploaded_total', {
  description: 'Uploads, by outcome (created or duplicate)',
});

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** Content-addressed blob key: identical uploads share one object. */
export const blobKeyFor = (sha256: string): string => `blobs/sha256/${sha256}`;

@Injectable()
export class DocumentsService {
  private readonly logger = new Logger(DocumentsService.name);

  constructor(
    private readonly repository: DocumentsRepository,
    private readonly outbox: OutboxRelay,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly knowledgeBases: KnowledgeBases,
  ) {}

  /** Stores the original in S3, then the row and its event in one transaction. */
  async upload(
    tenantId: TenantId,
    access: Access,
    file: UploadedFile,
    fields: UploadFields,
  ): Promise<DocumentView> {
    requireAction(access, 'write');
    await this.knowledgeBases.requireExisting(tenantId, fields.knowledgeBaseIds ?? []);
    if (file.size === 0) {
      throw new DocumentError(DocumentErrorCode.EmptyFile, `file "${file.originalname}" is empty`);
    }
    const sha256 = await sha256OfFile(file.path);
    // Only a document the caller can read counts as a duplicate: otherwise its existence would
    // leak. Checked here for the common case, and again under a lock when inserting.
    const existing = await this.repository.findBySha256(tenantId, sha256, visibilityOf(access));
    if (existing) {
      uploads.add(1, { outcome: 'duplicate' });
      return { ...existing, duplicate: true };
    }
    const knowledgeBaseIds = [...new Set(fields.knowledgeBaseIds ?? [DEFAULT_KNOWLEDGE_BASE])];
    const blobKey = blobKeyFor(sha256);
    if (!(await this.blobs.exists(blobKey))) {
      // Streamed: bodies over one part go up as an S3 multipart upload.
      await this.blobs.put(blobKey, createReadStream(file.path), file.mimetype);
    }
    const { document, duplicate } = await this.repository.insertUnlessDuplicate(
      {
        id: randomUUID(),
        tenantId,
        title: fields.title?.trim() || file.originalname,
        filename: file.originalname,
        contentType: file.mimetype || 'application/octet-stream',
        sizeBytes: file.size,
        sha256,
        blobBucket: this.blobs.bucket,
        blobKey,
        metadata: fields.metadata ?? {},
        tags: [...new Set(fields.tags ?? [])],
        knowledgeBaseIds,
        ownerId: access.userId,
        acl: fields.acl ?? { users: [], groups: [], roles: [], tenant: false },
        now: this.clock(),
      },
      visibilityOf(access),
    );
    annotateActiveSpan({ 'kb.tenant_id': tenantId, 'kb.document_id': document.id });
    if (duplicate) {
      // Lost the race to a concurrent upload of the same content: that one is the document.
      uploads.add(1, { outcome: 'duplicate' });
      return { ...document, duplicate: true };
    }
    uploads.add(1, { outcome: 'created' });
    this.outbox.wake();
    return document;
  }

  /**
   * New content for an existing document: stored in S3, then the document moves to its next
   * version and goes through the pipeline again. Search keeps answering from the previous version
   * until every chunk of the new one is indexed (blue-green per document). Content identical to
   * the current version changes nothing (200, `unchanged: true`).
   */
  async replaceContent(
    tenantId: TenantId,
    access: Access,
    id: string,
    file: UploadedFile,
  ): Promise<DocumentView & { unchanged?: true }> {
    const current = await this.get(tenantId, access, id);
    requireAction(access, 'write');
    if (file.size === 0) {
      throw new DocumentError(DocumentErrorCode.EmptyFile, `file "${file.originalname}" is empty`);
    }
    const sha256 = await sha256OfFile(file.path);
    if (sha256 === current.sha256) return { ...current, unchanged: true };
    const blobKey = blobKeyFor(sha256);
    if (!(await this.blobs.exists(blobKey))) {
      await this.blobs.put(blobKey, createReadStream(file.path), file.mimetype);
    }
    const replaced = await this.repository.replaceContentWithEvent(tenantId, id, {
      filename: file.originalname,
      contentType: file.mimetype || 'application/octet-stream',
      sizeBytes: file.size,
      sha256,
      blobBucket: this.blobs.bucket,
      blobKey,
      now: this.clock(),
    });
    if (!replaced) throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
    this.outbox.wake();
    if (!(await this.repository.isContentReferenced(replaced.previousSha256))) {
      await this.blobs.delete(blobKeyFor(replaced.previousSha256));
    }
    return replaced.document;
  }

  /**
   * Deletes the document and, when no other document shares its content, the original in S3.
   * The `deleted` event (same transaction) makes indexing-service drop its vectors and lexical rows.
   * A concurrent upload of identical content racing this delete can lose its blob; the parser then
   * fails that document with a reason rather than dropping it.
   */
  async delete(tenantId: TenantId, access: Access, id: string): Promise<DeleteResult> {
    await this.get(tenantId, access, id);
    requireAction(access, 'delete');
    const deleted = await this.repository.deleteWithEvent(tenantId, id);
    if (!deleted) {
      throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
    }
    this.outbox.wake();
    const blobDeleted = !(await this.repository.isContentReferenced(deleted.sha256));
    if (blobDeleted) await this.blobs.delete(deleted.blobKey);
    return { documentId: id, blobDeleted, indexRemoval: 'scheduled' };
  }

  /** A document the caller may not read answers 404, exactly like one that does not exist. */
  async get(tenantId: TenantId, access: Access, id: string): Promise<DocumentView> {
    const document = await this.repository.findById(tenantId, id, visibilityOf(access));
    if (!document) {
      throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
    }
    return document;
  }

  /**
   * Replaces who may read a document (its owner always may): the owner or a tenant admin only.
   * The indexes update the document's chunks in place; nothing is re-embedded.
   */
  async setAcl(
    tenantId: TenantId,
    access: Access,
    id: string,
    acl: DocumentAcl,
  ): Promise<DocumentView> {
    const document = await this.get(tenantId, access, id);
    if (document.ownerId !== access.userId && !access.isAdmin) {
      throw new DocumentError(
        DocumentErrorCode.PermissionDenied,
        `only the owner or a tenant admin may change the ACL of document ${id}`,
      );
    }
    const updated = await this.repository.setAclWithEvent(
      tenantId,
      id,
      acl,
      access.userId,
      this.clock(),
    );
    if (!updated) throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
    this.outbox.wake();
    return updated;
  }

  /**
   * Edits tags, metadata or knowledge bases (needs `write` and read access): the document keeps
   * its version and its vectors; the indexes update its chunks in place.
   */
  async edit(
    tenantId: TenantId,
    access: Access,
    id: string,
    edit: Partial<EditableAttributes>,
  ): Promise<DocumentView> {
    await this.get(tenantId, access, id);
    requireAction(access, 'write');
    await this.knowledgeBases.requireExisting(tenantId, edit.knowledgeBaseIds ?? []);
    const updated = await this.repository.setAttributesWithEvent(tenantId, id, edit, this.clock());
    if (!updated) throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
    this.outbox.wake();
    return updated;
  }

  async list(
    tenantId: TenantId,
    access: Access,
    limit: number,
    cursor?: string,
    knowledgeBaseId?: string,
  ): Promise<DocumentPage> {
    const after = cursor ? decodeCursor(cursor) : undefined;
    const items = await this.repository.list(
      tenantId,
      limit + 1,
      visibilityOf(access),
      after,
      knowledgeBaseId,
    );
    const page = items.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: page,
      nextCursor: items.length > limit && last ? encodeCursor(last) : null,
    };
  }

  /** Applies a pipeline status event; idempotent and order-tolerant. */
  async applyStatus(tenantId: TenantId, event: DocumentStatusChanged, at: Date): Promise<void> {
    const changed = await this.repository.applyStatus(
      tenantId,
      {
        documentId: event.documentId,
        version: event.version,
        status: event.status,
        ...(event.reason ? { reason: event.reason } : {}),
        ...(event.detail ? { detail: event.detail } : {}),
        ...(event.chunkCount !== undefined ? { chunkCount: event.chunkCount } : {}),
        at,
      },
      STATUS_RANK[event.status],
    );
    if (changed) {
      this.logger.log(`document ${event.documentId} v${event.version} is ${event.status}`);
    }
  }
}

function encodeCursor(document: DocumentView): string {
  return Buffer.from(JSON.stringify({ createdAt: document.createdAt, id: document.id })).toString(
    'base64url',
  );
}

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { createdAt?: unknown }).createdAt === 'string' &&
      typeof (value as { id?: unknown }).id === 'string'
    ) {
      return value as { createdAt: string; id: string };
    }
  } catch {
    // fall through to the error below
  }
  throw new DocumentError(DocumentErrorCode.InvalidCursor, 'cursor is malformed');
}
