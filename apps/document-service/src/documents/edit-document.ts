import type { Access } from '@kb/auth';
import type { EditableAttributes, TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';

import { requireDocumentActionOn } from '../access/document-actions';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { KnowledgeBaseDirectory } from '../pipelines/knowledge-base-directory.port';
import { CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import { type DocumentView, toView } from './document.model';
import { DocumentAudit } from './document-audit';
import { DocumentMembershipService } from './document-membership.service';
import { DocumentError, DocumentErrorCode } from './documents.errors';
import { DocumentsRepository } from './documents.repository';
import { readableDocument } from './readable-document';

/** `PATCH /v1/documents/:id`, and the attributes an upload of a new version brings. */
@Injectable()
export class EditDocument {
  constructor(
    private readonly documents: DocumentsRepository,
    private readonly membership: DocumentMembershipService,
    private readonly knowledgeBases: KnowledgeBaseDirectory,
    private readonly transactions: TransactionRunner,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly audit: DocumentAudit,
  ) {}

  /**
   * Edits tags, metadata or knowledge bases (needs `write` and read access): the document keeps
   * its version and its vectors; `attributes_changed` makes the indexes update its chunks in
   * place. A knowledge base that brings a new pipeline re-drives the current version through it.
   */
  async edit(
    tenantId: TenantId,
    access: Access,
    id: string,
    edit: Partial<EditableAttributes> & { inactive?: boolean },
  ): Promise<DocumentView> {
    const current = await readableDocument(this.documents, tenantId, access, id);
    requireDocumentActionOn(access, 'write', current);
    await this.knowledgeBases.requireExisting(tenantId, edit.knowledgeBaseIds ?? []);
    const now = this.clock();
    const updated = await this.transactions.run(async (trx) => {
      const current = await this.documents.lockForUpdate(trx, tenantId, id);
      if (!current) return undefined;
      await this.audit.record(trx, 'document_edited', access, [id], edit);
      return this.membership.editAttributes(trx, current, edit, now);
    });
    if (!updated) throw new DocumentError(DocumentErrorCode.NotFound, `document ${id} not found`);
    this.outbox.wake();
    return toView(updated);
  }
}
