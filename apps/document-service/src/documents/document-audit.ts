import type { Access } from '@kb/auth';
import { type AuditEvent, type TenantId, Topics } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';

import { type OutboxBatchWake, OutboxRelay } from '../outbox/outbox.relay';
import { OutboxWriter } from '../outbox/outbox.writer';
import { CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner, type Trx } from '../platform/transaction.runner';
import type { ListingRead } from './documents.repository';

/** What document-service audits on `kb.audit.v1` (review L5). */
export type DocumentAuditAction = Extract<
  AuditEvent['action'],
  | 'document_uploaded'
  | 'document_content_replaced'
  | 'document_edited'
  | 'document_deleted'
  | 'document_read'
  | 'documents_listed'
  | 'legal_hold_placed'
  | 'legal_hold_released'
  | 'erasure_requested'
>;

/**
 * Audit records of document uploads, edits, deletes and reads, through the outbox: a write's
 * record is in the transaction of the write (no change without its record, no record without the
 * change), a read's is one INSERT of its own before the answer goes out, published with
 * the other reads of the next 200 ms rather than at once. acl-service
 * stores them beside searches and ACL changes (`GET /v1/audit`).
 */
@Injectable()
export class DocumentAudit {
  constructor(
    private readonly events: OutboxWriter,
    private readonly transactions: TransactionRunner,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(OutboxRelay) private readonly relay: OutboxBatchWake,
  ) {}

  /** Records a change in its transaction; the caller wakes the relay after committing. */
  async record(
    trx: Trx,
    action: DocumentAuditAction,
    access: Pick<Access, 'tenantId' | 'userId'>,
    documentIds: string[],
    detail: object = {},
    knowledgeBaseIds?: string[],
  ): Promise<void> {
    // Keyed like the document's own events, or by actor for a list of many.
    const key = documentIds.length === 1 ? (documentIds[0] ?? access.userId) : access.userId;
    await this.events.enqueue(trx, Topics.audit, access.tenantId as TenantId, key, {
      ...this.event(action, access, documentIds, detail),
      ...(knowledgeBaseIds ? { knowledgeBaseIds } : {}),
    });
  }

  /**
   * The record of a listing of up to `served` documents, for the statement that reads the page to
   * write with it (`ListingRead`: it fills in the documents and the key). Once the page is read,
   * `listed` wakes the relay.
   */
  listing(
    access: Pick<Access, 'tenantId' | 'userId'>,
    served: number,
    detail: object = {},
  ): ListingRead {
    const record = this.event('documents_listed', access, [], detail);
    const message = this.events.message(
      Topics.audit,
      access.tenantId as TenantId,
      access.userId,
      record,
    );
    return { message, served };
  }

  /** A listing's record was written with its page: published with the reads of the window. */
  listed(): void {
    this.relay.wakeSoon();
  }

  private event(
    action: DocumentAuditAction,
    access: Pick<Access, 'userId'>,
    documentIds: string[],
    detail: object,
  ): AuditEvent {
    return {
      actor: access.userId,
      action,
      detail: JSON.stringify(detail).slice(0, 4000),
      documentIds,
      chunks: [],
      at: this.clock().toISOString(),
    };
  }

  /** Records a read the caller was served. */
  async read(
    action: Extract<DocumentAuditAction, 'document_read' | 'documents_listed'>,
    access: Pick<Access, 'tenantId' | 'userId'>,
    documentIds: string[],
    detail: object = {},
  ): Promise<void> {
    // One INSERT, so no transaction around it (BEGIN and COMMIT were two of a listing's four
    // round trips to Postgres).
    await this.transactions.statement((trx) =>
      this.record(trx, action, access, documentIds, detail),
    );
    // Not woken at once: the reads of the next OUTBOX_BATCH_MS (200 ms) share one drain. Woken
    // per read, it ran a drain (four round trips to Postgres and a produce request) beside every
    // answer: each search's hit details are a read (docs/adr/0029).
    this.relay.wakeSoon();
  }
}
