import type { TenantId } from '@kb/contracts';
import { Topics } from '@kb/contracts';
import type { IndexGenerations } from '@kb/index-state';
import type { BlobStore } from '@kb/storage';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { type AttachmentsRemoved, MailAttachmentLinks } from '../attachments/attachment-links';
import { DocumentAudit } from '../documents/document-audit';
import { deletedEventOf } from '../documents/document-events.builder';
import { type DeletedDocument, DocumentsRepository } from '../documents/documents.repository';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { OutboxWriter } from '../outbox/outbox.writer';
import { forEachConcurrently } from '../platform/for-each-concurrently';
import { BLOB_STORE, GENERATIONS } from '../platform/tokens';
import type { Trx } from '../platform/transaction.runner';

/** A deleted document's original, which `after` removes unless something else points at it. */
type Deleted = AttachmentsRemoved['deleted'][number];

/**
 * The rest of a delete's path for documents deleted in bulk by retention and erasure
 * (docs/adr/0052), as `DocumentsService.delete` does it for one: each document's `deleted` event
 * (indexing-service drops its chunks from both indexes and its derived objects) and an audit
 * record in the transaction of the delete; after the commit, the relay woken, the tenant's cached
 * search results retired, and the originals nothing else points at removed from S3. A deleted
 * mail's attachment documents (docs/adr/0048) go with it, as they do with a mail deleted alone.
 */
@Injectable()
export class BulkDeletion {
  private readonly logger = new Logger(BulkDeletion.name);

  constructor(
    private readonly documents: DocumentsRepository,
    private readonly events: OutboxWriter,
    private readonly audit: DocumentAudit,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(BLOB_STORE) private readonly blobs: Pick<BlobStore, 'delete'>,
    @Inject(GENERATIONS) private readonly generations: Pick<IndexGenerations, 'bump'>,
    private readonly attachments: MailAttachmentLinks,
  ) {}

  /**
   * In the delete's transaction: the deleted mails' attachment documents deleted too (each with
   * its `deleted` event; one under a legal hold stays), the events, and one audit record naming
   * all (`actor` names who deleted). Returns the attachments deleted, for `after`.
   */
  async record(
    trx: Trx,
    tenantId: TenantId,
    actor: string,
    rows: DeletedDocument[],
    detail: object,
  ): Promise<Deleted[]> {
    if (rows.length === 0) return [];
    const attached: Deleted[] = [];
    for (const row of rows) {
      attached.push(...(await this.attachments.remove(trx, tenantId, row.id)).deleted);
    }
    await this.events.enqueueMany(
      trx,
      Topics.document,
      tenantId,
      rows.map((row) => ({ key: row.id, payload: deletedEventOf(row.id, row.metaVersion) })),
    );
    const ids = [...rows, ...attached].map((row) => row.id);
    await this.audit.record(trx, 'document_deleted', { tenantId, userId: actor }, ids, detail);
    return attached;
  }

  /** After the commit; failures are logged, never undo the delete. */
  async after(tenantId: TenantId, rows: Deleted[]): Promise<void> {
    if (rows.length === 0) return;
    this.outbox.wake();
    try {
      await this.generations.bump(tenantId);
    } catch (error) {
      this.logger.warn(
        `index generation not bumped after ${rows.length} deletes: ${String(error)}`,
      );
    }
    await forEachConcurrently(rows, 8, async (row) => {
      if (await this.documents.isBlobReferenced(row.sha256, row.blobKey)) return;
      await this.blobs.delete(row.blobKey);
    }).catch((error: unknown) => this.logger.warn(`originals not all removed: ${String(error)}`));
  }
}
