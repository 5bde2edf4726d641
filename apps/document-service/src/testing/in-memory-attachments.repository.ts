import type { TenantId } from '@kb/contracts';

import { AttachmentsRepository } from '../attachments/attachments.repository';
import type { SkippedAttachment } from '../documents/document.model';
import type { Trx } from '../platform/transaction.runner';
import { type InMemoryDatabase, keyOf } from './in-memory.database';
import { openTrx } from './in-memory-transaction.runner';

/** `AttachmentsRepository` over the in-memory tables the documents repository shares. */
export class InMemoryAttachmentsRepository extends AttachmentsRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async link(trx: Trx, tenantId: TenantId, documentId: string, mailId: string): Promise<void> {
    openTrx(trx);
    const document = this.db.documents.get(keyOf(tenantId, documentId));
    if (document) document.attachedTo = mailId;
  }

  async recordSkipped(
    tenantId: TenantId,
    mailId: string,
    version: number,
    skipped: SkippedAttachment[],
  ): Promise<void> {
    const mail = this.db.documents.get(keyOf(tenantId, mailId));
    if (mail?.version === version) mail.attachmentsSkipped = skipped.map((s) => ({ ...s }));
  }
}
