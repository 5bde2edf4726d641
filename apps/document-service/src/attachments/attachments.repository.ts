import type { TenantId } from '@kb/contracts';

import type { SkippedAttachment } from '../documents/document.model';
import type { Trx } from '../platform/transaction.runner';

/** The external-id prefix of a mail's attachment documents (docs/adr/0048); reserved. */
export const ATTACHMENT_EXTERNAL_ID_PREFIX = 'attachment:';

/** The external ids of a mail's attachments, of any version (`attachment:<mail>:`). */
export const attachmentsPrefix = (mailId: string): string =>
  `${ATTACHMENT_EXTERNAL_ID_PREFIX}${mailId}:`;

/** The external ids of the attachments of one version of a mail. */
export const versionAttachmentsPrefix = (mailId: string, version: number): string =>
  `${attachmentsPrefix(mailId)}v${version}:`;

/**
 * One attachment's external id: the mail, its version, the attachment's place in it. A
 * redelivered report finds the document it made; the mail's next version makes new ones.
 */
export const attachmentExternalId = (mailId: string, version: number, index: number): string =>
  `${versionAttachmentsPrefix(mailId, version)}${index}`;

/** What only a mail's attachments write on `documents` (docs/adr/0048). */
export abstract class AttachmentsRepository {
  /** Marks `documentId` as attached to `mailId`, in the transaction that inserts it. */
  abstract link(trx: Trx, tenantId: TenantId, documentId: string, mailId: string): Promise<void>;
  /** Keeps what the mail's `version` skipped; nothing when the mail is at another version. */
  abstract recordSkipped(
    tenantId: TenantId,
    mailId: string,
    version: number,
    skipped: SkippedAttachment[],
  ): Promise<void>;
}
