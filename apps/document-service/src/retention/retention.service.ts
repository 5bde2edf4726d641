import type { Access } from '@kb/auth';
import type { TenantId } from '@kb/contracts';
import { Inject, Injectable, Logger } from '@nestjs/common';

import type { DeletedDocument } from '../documents/documents.repository';
import { HeldDocuments } from '../holds/legal-holds.repository';
import { KnowledgeBasesRepository } from '../knowledge-bases/knowledge-bases.repository';
import { CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import { BulkDeletion } from './bulk-deletion';
import { RetentionError, RetentionErrorCode } from './retention.errors';
import type { RetentionPreview } from './retention.model';
import { RetentionRepository } from './retention.repository';

/** Who the audit records name as deleting what retention deletes. */
export const RETENTION_ACTOR = 'system:retention';
/** Documents one tenant's run deletes in one transaction; the rest wait for the next tick. */
export const RETENTION_BATCH = 200;
/** Tenants one tick serves. */
const TENANTS_PER_TICK = 16;

/**
 * Retention (docs/adr/0052): deletes the documents whose own `expiresAt` or whose knowledge
 * bases' policies are due, through the path a delete takes — the row and its `deleted` event
 * (indexing-service drops both indexes' chunks and derived objects), an audit record in the same
 * transaction, the cached results retired, the original removed when nothing else points at it —
 * and never a document a legal hold covers.
 */
@Injectable()
export class RetentionService {
  private readonly logger = new Logger(RetentionService.name);

  constructor(
    private readonly retention: RetentionRepository,
    private readonly knowledgeBases: KnowledgeBasesRepository,
    private readonly holds: HeldDocuments,
    private readonly transactions: TransactionRunner,
    private readonly deletion: BulkDeletion,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** One run over the tenants with documents due; how many documents it deleted. */
  async run(): Promise<number> {
    const now = this.clock();
    let deleted = 0;
    for (const tenantId of await this.retention.tenantsDue(now, TENANTS_PER_TICK)) {
      deleted += (await this.runTenant(tenantId, now)).length;
    }
    return deleted;
  }

  /** Deletes one batch of the tenant's due documents that no hold covers. */
  async runTenant(tenantId: TenantId, now: Date): Promise<DeletedDocument[]> {
    const [deleted, attached] = await this.transactions.run(async (trx) => {
      const holds = await this.holds.activeHolds(trx, tenantId);
      const rows = await this.retention.deleteDue(trx, tenantId, now, holds, RETENTION_BATCH);
      const cause = { cause: 'retention' };
      return [rows, await this.deletion.record(trx, tenantId, RETENTION_ACTOR, rows, cause)];
    });
    if (deleted.length > 0) {
      const also = attached.length > 0 ? ` and ${attached.length} of their attachment(s)` : '';
      this.logger.log(
        `retention deleted ${deleted.length} document(s)${also} of tenant ${tenantId}`,
      );
    }
    await this.deletion.after(tenantId, [...deleted, ...attached]);
    return deleted;
  }

  /** What the next runs would delete from a knowledge base now, and what holds keep; admins. */
  async preview(
    tenantId: TenantId,
    access: Access,
    knowledgeBaseId: string,
    limit: number,
  ): Promise<RetentionPreview> {
    if (!access.isAdmin) {
      throw new RetentionError(
        RetentionErrorCode.PermissionDenied,
        'only a tenant admin may preview retention',
      );
    }
    const knowledgeBase = await this.knowledgeBases.find(tenantId, knowledgeBaseId);
    if (!knowledgeBase) {
      throw new RetentionError(
        RetentionErrorCode.NotFound,
        `knowledge base ${knowledgeBaseId} not found`,
      );
    }
    const now = this.clock();
    const rows = await this.transactions.run(async (trx) => {
      const holds = await this.holds.activeHolds(trx, tenantId);
      return this.retention.preview(trx, tenantId, knowledgeBaseId, now, holds, limit + 1);
    });
    const shown = rows.slice(0, limit);
    const item = (row: (typeof rows)[number]) => ({
      id: row.id,
      title: row.title,
      dueAt: row.dueAt.toISOString(),
    });
    return {
      knowledgeBaseId,
      retentionDays: knowledgeBase.retentionDays,
      retentionFrom: knowledgeBase.retentionFrom,
      asOf: now.toISOString(),
      deletes: shown.filter((row) => row.hold === null).map(item),
      held: shown
        .filter((row) => row.hold !== null)
        .map((row) => ({ ...item(row), hold: row.hold!, reason: 'legal_hold' as const })),
      truncated: rows.length > limit,
    };
  }
}
