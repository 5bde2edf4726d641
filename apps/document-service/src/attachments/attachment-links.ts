import { isDeepStrictEqual } from 'node:util';

import { type TenantId, Topics } from '@kb/contracts';
import type { BlobStore } from '@kb/storage';
import { Inject, Injectable } from '@nestjs/common';

import { applyAcl } from '../documents/apply-acl';
import type { AttachmentsView, DocumentRecord } from '../documents/document.model';
import { deletedEventOf } from '../documents/document-events.builder';
import { DocumentsRepository, type Visibility } from '../documents/documents.repository';
import { HeldDocuments } from '../holds/legal-holds.repository';
import { OutboxWriter } from '../outbox/outbox.writer';
import { BLOB_STORE } from '../platform/tokens';
import type { Trx } from '../platform/transaction.runner';
import { attachmentsPrefix, versionAttachmentsPrefix } from './attachments.repository';

/** What removing a mail's attachment documents did: those deleted, those a hold kept. */
export interface AttachmentsRemoved {
  deleted: Array<{ id: string; sha256: string; blobKey: string }>;
  held: Array<{ documentId: string; hold: string }>;
}

/**
 * A mail's attachment documents as the mail sees them (docs/adr/0048): listed on its GET, and
 * deleted with it (or when its next version replaces them) through the ordinary delete, a
 * legal hold respected: a held attachment stays and is reported (docs/adr/0052).
 */
@Injectable()
export class MailAttachmentLinks {
  constructor(
    private readonly documents: DocumentsRepository,
    private readonly holds: HeldDocuments,
    private readonly events: OutboxWriter,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  /** The mail's attachment documents `visibility` may read; of every version of the mail (in `trx` when given). */
  of(
    tenantId: TenantId,
    mailId: string,
    visibility: Visibility,
    trx?: Trx,
  ): Promise<DocumentRecord[]> {
    const prefix = attachmentsPrefix(mailId);
    return this.documents.listByExternalIdPrefix(tenantId, prefix, visibility, trx);
  }

  /** What GET shows of a mail's attachments; undefined for a document that has none. */
  async viewOf(
    tenantId: TenantId,
    visibility: Visibility,
    mail: DocumentRecord,
  ): Promise<AttachmentsView | undefined> {
    const documents = await this.of(tenantId, mail.id, visibility);
    if (!mail.attachmentsSkipped?.length && documents.length === 0) return undefined;
    return {
      documents: documents.map(({ id, filename, status }) => ({ id, filename, status })),
      skipped: mail.attachmentsSkipped ?? [],
    };
  }

  /**
   * Deletes the mail's attachment documents in `trx` (each with its `deleted` event), but for
   * those of `keepVersion` of the mail when given (its current attachments) and those held.
   */
  async remove(
    trx: Trx,
    tenantId: TenantId,
    mailId: string,
    keepVersion?: number,
  ): Promise<AttachmentsRemoved> {
    const kept =
      keepVersion === undefined ? undefined : versionAttachmentsPrefix(mailId, keepVersion);
    const attached = (await this.of(tenantId, mailId, 'all', trx)).filter(
      (document) => !kept || !document.externalId?.startsWith(kept),
    );
    const removed: AttachmentsRemoved = { deleted: [], held: [] };
    if (attached.length === 0) return removed;
    const held = await this.holds.heldAmong(
      trx,
      tenantId,
      attached.map(({ id }) => id),
    );
    for (const { id } of attached) {
      const hold = held.get(id);
      if (hold !== undefined) {
        removed.held.push({ documentId: id, hold });
        continue;
      }
      const row = await this.documents.delete(trx, tenantId, id);
      if (!row) continue;
      await this.events.enqueue(
        trx,
        Topics.document,
        tenantId,
        id,
        deletedEventOf(id, row.metaVersion),
      );
      removed.deleted.push({ id, sha256: row.sha256, blobKey: row.blobKey });
    }
    return removed;
  }

  /**
   * In the transaction that makes an attachment's document from `mail` as read before: locks the
   * mail and, when its ACL has changed since, gives the attachment the mail's ACL now. An ACL
   * change committed in between did not list this attachment (`applyAcl`); one after waits for
   * the lock and lists it. Actor `system`, as the intake's.
   */
  async followAcl(trx: Trx, attachmentId: string, mail: DocumentRecord, now: Date): Promise<void> {
    const current = await this.documents.lockForUpdate(trx, mail.tenantId, mail.id);
    if (!current || isDeepStrictEqual(current.acl, mail.acl)) return;
    const deps = { documents: this.documents, events: this.events };
    await applyAcl(deps, trx, {
      tenantId: mail.tenantId,
      id: attachmentId,
      acl: current.acl,
      actor: 'system',
      now,
    });
  }

  /** After the deleting transaction: each deleted attachment's original, unless still in use. */
  async removeBlobs(removed: AttachmentsRemoved): Promise<void> {
    for (const { sha256, blobKey } of removed.deleted) {
      if (!(await this.documents.isBlobReferenced(sha256, blobKey)))
        await this.blobs.delete(blobKey);
    }
  }
}
