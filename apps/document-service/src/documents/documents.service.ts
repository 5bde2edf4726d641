import type { Access } from '@kb/auth';
import {
  type DocumentFilterNode,
  type DocumentStatusChanged,
  type EditableAttributes,
  type TenantId,
  Topics,
} from '@kb/contracts';
import type { BlobStore } from '@kb/storage';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { requireDocumentAction, requireDocumentActionOn } from '../access/document-actions';
import { MailAttachmentLinks } from '../attachments/attachment-links';
import { HeldDocuments } from '../holds/legal-holds.repository';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { OutboxWriter } from '../outbox/outbox.writer';
import { BLOB_STORE, CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import { applyAcl } from './apply-acl';
import {
  decodeCursor,
  decodeExternalIdCursor,
  encodeCursor,
  encodeExternalIdCursor,
} from './document.cursor';
import {
  type DeleteResult,
  type DocumentAcl,
  type DocumentPage,
  type DocumentView,
  isFinal,
  type NewDocument,
  toView,
  type UploadFields,
  type VersionStart,
} from './document.model';
import { DocumentAudit } from './document-audit';
import type { UploadedFile } from './document-content.storage';
import { deletedEventOf } from './document-events.builder';
import { requireFutureEnds } from './document-grants';
import { DocumentError, DocumentErrorCode } from './documents.errors';
import {
  DocumentsRepository,
  type ListingRead,
  type Visibility,
  visibilityOf,
} from './documents.repository';
import { EditDocument } from './edit-document';
import { readableDocument } from './readable-document';
import { ReplaceDocumentContent } from './replace-document-content';
import { UploadDocument, type UploadOptions } from './upload-document';

/** A pipeline status event as consumed: whose, what, and when it happened. */
export interface StatusEvent {
  tenantId: TenantId;
  event: DocumentStatusChanged;
  at: Date;
}

/**
 * Every operation on a document. The larger use cases have files of their own (`UploadDocument`,
 * `ReplaceDocumentContent`, `EditDocument`); the methods here hand over to them, so controllers,
 * the source sync and pre-computed chunks keep one entry point.
 */
@Injectable()
export class DocumentsService {
  private readonly logger = new Logger(DocumentsService.name);

  constructor(
    private readonly documents: DocumentsRepository,
    private readonly transactions: TransactionRunner,
    private readonly events: OutboxWriter,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly audit: DocumentAudit,
    private readonly uploads: UploadDocument,
    private readonly replacer: ReplaceDocumentContent,
    private readonly editor: EditDocument,
    private readonly holds: HeldDocuments,
    private readonly attachments: MailAttachmentLinks,
  ) {}

  /** See `UploadDocument`. */
  upload(
    tenantId: TenantId,
    access: Access,
    file: UploadedFile,
    fields: UploadFields,
    start?: VersionStart,
    options: UploadOptions = {},
  ): Promise<DocumentView> {
    return this.uploads.upload(tenantId, access, file, fields, start, options);
  }

  /** See `UploadDocument.register`. */
  register(
    doc: NewDocument,
    visibility: Visibility,
    start?: VersionStart,
  ): Promise<{ document: DocumentView; duplicate: boolean }> {
    return this.uploads.register(doc, visibility, start);
  }

  /** See `ReplaceDocumentContent`. */
  replaceContent(
    tenantId: TenantId,
    access: Access,
    id: string,
    file: UploadedFile,
    start?: VersionStart,
  ): Promise<DocumentView & { unchanged?: true }> {
    return this.replacer.replace(tenantId, access, id, file, start);
  }

  /**
   * Deletes the document and, when no other document shares its content, the original in S3.
   * The `deleted` event (same transaction) makes indexing-service drop everything derived from it
   * (docs/adr/0019). Only a tenant admin, who sees every document, is told whether the original
   * went: for anyone else `blobDeleted: false` would reveal a document they cannot read holding
   * the same bytes (review M4).
   * A concurrent upload of identical content racing this delete can lose its blob; the parser then
   * fails that document with a reason rather than dropping it.
   * A document a legal hold covers is 409 `legal_hold`, naming the hold (docs/adr/0052). A
   * mail's attachment documents go with it, but for held ones, which the answer names (ADR 48).
   */
  async delete(tenantId: TenantId, access: Access, id: string): Promise<DeleteResult> {
    const current = await readableDocument(this.documents, tenantId, access, id);
    requireDocumentActionOn(access, 'delete', current);
    const deleted = await this.transactions.run(async (trx) => {
      const hold = (await this.holds.heldAmong(trx, tenantId, [id])).get(id);
      if (hold !== undefined) {
        throw new DocumentError(
          DocumentErrorCode.LegalHold,
          `document ${id} is under legal hold "${hold}" and cannot be deleted until the hold is released`,
        );
      }
      const row = await this.documents.delete(trx, tenantId, id);
      if (!row) return row;
      const event = deletedEventOf(id, row.metaVersion);
      await this.events.enqueue(trx, Topics.document, tenantId, id, event);
      const attached = await this.attachments.remove(trx, tenantId, id);
      const ids = [id, ...attached.deleted.map((document) => document.id)];
      await this.audit.record(trx, 'document_deleted', access, ids);
      return { ...row, attached };
    });
    if (!deleted) throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
    this.outbox.wake();
    const blobDeleted = !(await this.documents.isBlobReferenced(deleted.sha256, deleted.blobKey));
    if (blobDeleted) await this.blobs.delete(deleted.blobKey);
    const { attached } = deleted;
    await this.attachments.removeBlobs(attached);
    return {
      documentId: id,
      ...(access.isAdmin ? { blobDeleted } : {}),
      indexRemoval: 'scheduled',
      ...(attached.deleted.length + attached.held.length > 0
        ? {
            attachments: {
              deleted: attached.deleted.map((document) => document.id),
              held: attached.held,
            },
          }
        : {}),
    };
  }

  /** A document the caller may not read answers 404, exactly like one that does not exist. */
  async get(tenantId: TenantId, access: Access, id: string): Promise<DocumentView> {
    const document = await readableDocument(this.documents, tenantId, access, id);
    const attachments = await this.attachments.viewOf(tenantId, visibilityOf(access), document);
    return { ...toView(document), ...(attachments ? { attachments } : {}) };
  }

  /**
   * Replaces who may read a document (its owner always may): the owner or a tenant admin only.
   * `acl_changed` (the indexes update its chunks in place; nothing is re-embedded) and an audit
   * record are enqueued with the change.
   */
  async setAcl(
    tenantId: TenantId,
    access: Access,
    id: string,
    acl: DocumentAcl,
  ): Promise<DocumentView> {
    const document = await readableDocument(this.documents, tenantId, access, id);
    if (document.ownerId !== access.userId && !access.isAdmin) {
      throw new DocumentError(
        DocumentErrorCode.PermissionDenied,
        `only the owner or a tenant admin may change the ACL of document ${id}`,
      );
    }
    const now = this.clock();
    requireFutureEnds(acl, now);
    const updated = await this.transactions.run((trx) =>
      applyAcl({ documents: this.documents, events: this.events }, trx, {
        tenantId,
        id,
        acl,
        actor: access.userId,
        now,
      }),
    );
    if (!updated) throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
    this.outbox.wake();
    return toView(updated);
  }

  /**
   * Sets (or, with null, clears) the document's own retention date (docs/adr/0052): the retention
   * run deletes it once the date has passed, unless a hold covers it. Needs `write`; audited as
   * an edit in its transaction.
   */
  async setExpiry(
    tenantId: TenantId,
    access: Access,
    id: string,
    expiresAt: Date | null,
  ): Promise<DocumentView> {
    await readableDocument(this.documents, tenantId, access, id);
    requireDocumentAction(access, 'write');
    const updated = await this.transactions.run(async (trx) => {
      const row = await this.documents.setExpiry(trx, tenantId, id, expiresAt);
      if (row) {
        const detail = { expiresAt: expiresAt?.toISOString() ?? null };
        await this.audit.record(trx, 'document_edited', access, [id], detail);
      }
      return row;
    });
    if (!updated) throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
    this.outbox.wake();
    return toView(updated);
  }

  /** An upload's `expiresAt`, set on what it uploaded; never on a duplicate's existing copy. */
  async expireUpload<T extends DocumentView & { unchanged?: true }>(
    tenantId: TenantId,
    access: Access,
    document: T,
    expiresAt: string | undefined,
  ): Promise<DocumentView> {
    if (expiresAt === undefined || document.duplicate) return document;
    const dated = await this.setExpiry(tenantId, access, document.id, new Date(expiresAt));
    return { ...dated, ...(document.unchanged ? { unchanged: true as const } : {}) };
  }

  /** See `EditDocument`. */
  edit(
    tenantId: TenantId,
    access: Access,
    id: string,
    edit: Partial<EditableAttributes> & { inactive?: boolean },
  ): Promise<DocumentView> {
    return this.editor.edit(tenantId, access, id, edit);
  }

  /**
   * A page of the documents the caller may read whose external id starts with `prefix` (ADR 26),
   * in external-id order, after the cursor's external id (review N6: it was every one at once).
   */
  async pageByExternalIdPrefix(
    tenantId: TenantId,
    access: Access,
    prefix: string,
    limit: number,
    cursor?: string,
  ): Promise<DocumentPage> {
    const after = cursor ? decodeExternalIdCursor(cursor) : undefined;
    const rows = await this.documents.pageByExternalIdPrefix(
      tenantId,
      prefix,
      visibilityOf(access),
      limit + 1,
      after,
    );
    const page = rows.slice(0, limit).map(toView);
    const last = page[page.length - 1];
    return {
      items: page,
      nextCursor:
        rows.length > limit && last?.externalId ? encodeExternalIdCursor(last.externalId) : null,
    };
  }

  async list(
    tenantId: TenantId,
    access: Access,
    limit: number,
    cursor?: string,
    knowledgeBaseId?: string,
    filter?: DocumentFilterNode,
    read?: ListingRead,
  ): Promise<DocumentPage> {
    const after = cursor ? decodeCursor(cursor) : undefined;
    const items = await this.documents.list(
      tenantId,
      limit + 1,
      visibilityOf(access),
      after,
      knowledgeBaseId,
      filter,
      read,
    );
    const page = items.slice(0, limit).map(toView);
    const last = page[page.length - 1];
    return {
      items: page,
      nextCursor: items.length > limit && last ? encodeCursor(last) : null,
    };
  }

  /** Applies one pipeline status event (`applyStatuses`). */
  applyStatus(tenantId: TenantId, event: DocumentStatusChanged, at: Date): Promise<void> {
    return this.applyStatuses([{ tenantId, event, at }]);
  }

  /** Applies pipeline status events, a consumed batch at once; idempotent and order-tolerant. */
  async applyStatuses(events: StatusEvent[]): Promise<void> {
    const moved = await this.documents.applyStatuses(
      events.map(({ tenantId, event, at }) => ({
        tenantId,
        documentId: event.documentId,
        version: event.version,
        status: event.status,
        // Empty strings are no reason or detail, as before.
        reason: event.reason || undefined,
        detail: event.detail || undefined,
        chunkCount: event.chunkCount,
        ...(event.pii ? { pii: event.pii } : {}),
        at,
      })),
    );
    // Each stage's service logs its own step; here only where a version ends up, at the default
    // level: four lines a document took ~1 ms of CPU each document in a profiled ingest (stdout
    // writes to a pipe are synchronous).
    for (const { documentId, version, status } of moved) {
      const line = `document ${documentId} v${version} is ${status}`;
      if (isFinal(status)) this.logger.log(line);
      else this.logger.debug(line);
    }
  }
}
