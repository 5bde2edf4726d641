import { randomUUID } from 'node:crypto';

import type { MailAttachments, TenantId } from '@kb/contracts';
import { QuotaExceededError } from '@kb/errors';
import { derivedPrefix, keyOfTenant } from '@kb/kafka';
import type { BlobStore } from '@kb/storage';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { DOCUMENT_CONFIG, type DocumentConfig } from '../config/document.config';
import type { DocumentRecord, SkippedAttachment } from '../documents/document.model';
import { blobKeyFor } from '../documents/document-content.storage';
import { DocumentMembershipService } from '../documents/document-membership.service';
import { DocumentsRepository } from '../documents/documents.repository';
import type { StatusEvent } from '../documents/documents.service';
import { UploadDocument } from '../documents/upload-document';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { BLOB_STORE, CLOCK, type Clock, QUOTA_CHECK } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import type { QuotaCheck } from '../usage/usage.service';
import { MailAttachmentLinks } from './attachment-links';
import { attachmentExternalId, AttachmentsRepository } from './attachments.repository';

type Extracted = MailAttachments['extracted'][number];

/**
 * A mail's attachments, as the parser reports them on a `parsing` status event, become documents
 * of their own (docs/adr/0048): in the mail's knowledge bases, with its tags, ACL and uploader,
 * titled by file name, linked to the mail; its ACL follows the mail's from then on (`applyAcl`).
 * Idempotent: each has the external id `attachment:<mail>:v<version>:<index>`, so a redelivered report finds what it made. A report of
 * the mail's next version replaces the attachments of the earlier ones (held ones stay); a
 * report of a version the mail no longer has (or of a deleted mail) is ignored.
 */
@Injectable()
export class AttachmentIntake {
  private readonly logger = new Logger(AttachmentIntake.name);

  constructor(
    private readonly documents: DocumentsRepository,
    private readonly attachments: AttachmentsRepository,
    private readonly links: MailAttachmentLinks,
    private readonly uploads: UploadDocument,
    private readonly membership: DocumentMembershipService,
    private readonly transactions: TransactionRunner,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(QUOTA_CHECK) private readonly quotas: QuotaCheck,
    @Inject(DOCUMENT_CONFIG) private readonly config: Pick<DocumentConfig, 'MAX_UPLOAD_BYTES'>,
  ) {}

  /** The reports among consumed status events, one after another (a mail's are in order). */
  async receive(events: StatusEvent[]): Promise<void> {
    for (const { tenantId, event } of events) {
      if (event.attachments) {
        await this.take(tenantId, event.documentId, event.version, event.attachments);
      }
    }
  }

  private async take(
    tenantId: TenantId,
    mailId: string,
    version: number,
    report: MailAttachments,
  ): Promise<void> {
    const mail = await this.documents.findById(tenantId, mailId, 'all');
    if (mail?.version !== version) return;
    // The attachments of the mail's earlier versions go (through the ordinary delete).
    const replaced = await this.transactions.run((trx) =>
      this.links.remove(trx, tenantId, mailId, version),
    );
    if (replaced.deleted.length > 0) this.outbox.wake();
    await this.links.removeBlobs(replaced);
    const skipped: SkippedAttachment[] = [...report.skipped];
    for (const file of report.extracted) {
      const why = await this.add(mail, file);
      if (why) skipped.push({ index: file.index, filename: file.filename, reason: why });
    }
    skipped.sort((a, b) => a.index - b.index);
    await this.attachments.recordSkipped(tenantId, mailId, version, skipped);
  }

  /** Makes the attachment's document unless it exists; answers why not when it is skipped. */
  private async add(
    mail: DocumentRecord,
    file: Extracted,
  ): Promise<SkippedAttachment['reason'] | undefined> {
    const { tenantId } = mail;
    const externalId = attachmentExternalId(mail.id, mail.version, file.index);
    if (await this.documents.findByExternalId(tenantId, externalId)) return undefined;
    if (file.sizeBytes > this.config.MAX_UPLOAD_BYTES) return 'too_large';
    try {
      await this.quotas.beforeUpload(tenantId, mail.explicitKnowledgeBaseIds, file.sizeBytes);
    } catch (error) {
      if (!(error instanceof QuotaExceededError)) throw error;
      this.logger.warn(`mail ${mail.id}: attachment ${file.index} skipped: ${error.message}`);
      return 'quota_exceeded';
    }
    // Only this mail's own derived objects are copied (a report naming another key is a bug).
    keyOfTenant(file.blob.key, [`${derivedPrefix(tenantId)}${mail.id}/`], 'parse_error');
    const blobKey = blobKeyFor(tenantId, file.sha256);
    await this.blobs.put(blobKey, await this.blobs.openRead(file.blob.key), file.contentType);
    await this.uploads.register(
      {
        id: randomUUID(),
        tenantId,
        title: file.filename,
        filename: file.filename,
        contentType: file.contentType,
        sizeBytes: file.sizeBytes,
        sha256: file.sha256,
        blobKey,
        metadata: {},
        tags: mail.tags,
        knowledgeBaseIds: mail.explicitKnowledgeBaseIds,
        ownerId: mail.ownerId,
        acl: mail.acl,
        externalId,
        now: this.clock(),
      },
      'all',
      async (trx, document) => {
        await this.attachments.link(trx, tenantId, document.id, mail.id);
        await this.links.followAcl(trx, document.id, mail, this.clock());
        await this.membership.sendThroughPipelines(trx, { ...document, attachedTo: mail.id });
      },
    );
    return undefined;
  }
}
