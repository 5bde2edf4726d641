import type { Access } from '@kb/auth';
import type { TenantId } from '@kb/contracts';
import type { BlobStore } from '@kb/storage';
import { Inject, Injectable } from '@nestjs/common';

import { requireDocumentActionOn } from '../access/document-actions';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { BLOB_STORE, CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import { type DocumentView, toView, type VersionStart } from './document.model';
import { DocumentAudit } from './document-audit';
import {
  filenameOf,
  sha256OfFile,
  storeOriginal,
  type UploadedFile,
} from './document-content.storage';
import { DocumentMembershipService } from './document-membership.service';
import { DocumentError, DocumentErrorCode } from './documents.errors';
import { DocumentsRepository, type NewContent } from './documents.repository';
import { readableDocument } from './readable-document';

/** `PUT /v1/documents/:id/content`, and an upload naming an existing document's external id. */
@Injectable()
export class ReplaceDocumentContent {
  constructor(
    private readonly documents: DocumentsRepository,
    private readonly membership: DocumentMembershipService,
    private readonly transactions: TransactionRunner,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly audit: DocumentAudit,
  ) {}

  /**
   * New content for an existing document: stored in S3, then the document moves to its next
   * version and goes through the pipeline again. Search keeps answering from the previous version
   * until every chunk of the new one is indexed (blue-green per document). Content identical to
   * the current version changes nothing (200, `unchanged: true`).
   */
  async replace(
    tenantId: TenantId,
    access: Access,
    id: string,
    file: UploadedFile,
    start?: VersionStart,
  ): Promise<DocumentView & { unchanged?: true }> {
    const current = await readableDocument(this.documents, tenantId, access, id);
    requireDocumentActionOn(access, 'write', current);
    if (file.size === 0) {
      throw new DocumentError(DocumentErrorCode.EmptyFile, `file "${file.originalname}" is empty`);
    }
    const sha256 = await sha256OfFile(file.path);
    if (sha256 === current.sha256) return { ...toView(current), unchanged: true };
    const blobKey = await storeOriginal(this.blobs, tenantId, file, sha256);
    const content: NewContent = {
      filename: filenameOf(file),
      contentType: file.mimetype || 'application/octet-stream',
      sizeBytes: file.size,
      sha256,
      blobKey,
      now: this.clock(),
    };
    // The row moves to version + 1, `pending`, and its `uploaded` event is enqueued with it.
    const replaced = await this.transactions.run(async (trx) => {
      const previous = await this.documents.lockForUpdate(trx, tenantId, id);
      if (!previous) return undefined;
      const document = await this.documents.replaceContent(trx, tenantId, id, content);
      await (start ?? this.membership.sendThroughPipelines.bind(this.membership))(trx, document);
      await this.audit.record(trx, 'document_content_replaced', access, [id], {
        version: document.version,
      });
      return { document, previous };
    });
    if (!replaced) throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
    this.outbox.wake();
    const { sha256: previousSha256, blobKey: previousKey } = replaced.previous;
    if (!(await this.documents.isBlobReferenced(previousSha256, previousKey))) {
      await this.blobs.delete(previousKey);
    }
    return toView(replaced.document);
  }
}
