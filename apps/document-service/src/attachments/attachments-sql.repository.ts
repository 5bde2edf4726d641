import type { TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';

import type { SkippedAttachment } from '../documents/document.model';
import type { DocumentDatabase } from '../platform/db.types';
import { DB } from '../platform/tokens';
import { sqlOf, type Trx } from '../platform/transaction.runner';
import { AttachmentsRepository } from './attachments.repository';

@Injectable()
export class SqlAttachmentsRepository extends AttachmentsRepository {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {
    super();
  }

  async link(trx: Trx, tenantId: TenantId, documentId: string, mailId: string): Promise<void> {
    await sqlOf(trx)
      .updateTable('documents')
      .set({ attached_to: mailId })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', documentId)
      .execute();
  }

  async recordSkipped(
    tenantId: TenantId,
    mailId: string,
    version: number,
    skipped: SkippedAttachment[],
  ): Promise<void> {
    await this.db
      .updateTable('documents')
      .set({ attachments_skipped: JSON.stringify(skipped) })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', mailId)
      .where('version', '=', version)
      .execute();
  }
}
