import { randomUUID } from 'node:crypto';

import type { Access } from '@kb/auth';
import type { TenantId } from '@kb/contracts';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { DocumentAudit } from '../documents/document-audit';
import {
  KnowledgeBasesRepository,
  requireKnowledgeBase,
} from '../knowledge-bases/knowledge-bases.repository';
import { OutboxRelay, type OutboxWake } from '../outbox/outbox.relay';
import { CLOCK, type Clock } from '../platform/tokens';
import { TransactionRunner } from '../platform/transaction.runner';
import {
  activeHoldOf,
  type HoldListQuery,
  type HoldRecord,
  type HoldView,
  parseHoldFilter,
  type PlaceHold,
  toHoldView,
} from './legal-hold.model';
import { LegalHoldError, LegalHoldErrorCode } from './legal-holds.errors';
import { LegalHoldsRepository } from './legal-holds.repository';

/**
 * Legal holds (docs/adr/0052): a tenant admin places a named hold on a knowledge base, a set of
 * documents or a listing filter, and releases it explicitly. While it is active every deletion
 * path refuses or skips the documents it covers (`HeldDocuments`). Placing and releasing are
 * recorded in the register and on `kb.audit.v1`, in the transaction of the change.
 */
@Injectable()
export class LegalHoldsService {
  private readonly logger = new Logger(LegalHoldsService.name);

  constructor(
    private readonly holds: LegalHoldsRepository,
    private readonly knowledgeBases: KnowledgeBasesRepository,
    private readonly transactions: TransactionRunner,
    private readonly audit: DocumentAudit,
    @Inject(OutboxRelay) private readonly outbox: OutboxWake,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async place(tenantId: TenantId, access: Access, request: PlaceHold): Promise<HoldView> {
    requireAdmin(access);
    const scope = request.knowledgeBaseId
      ? 'knowledge_base'
      : request.documentIds
        ? 'documents'
        : 'filter';
    if (request.knowledgeBaseId) {
      await requireKnowledgeBase(this.knowledgeBases, tenantId, request.knowledgeBaseId);
    }
    if (request.where) parseHoldFilter(request.where);
    const hold: HoldRecord = {
      id: randomUUID(),
      tenantId,
      name: request.name,
      reason: request.reason,
      scope,
      knowledgeBaseId: request.knowledgeBaseId ?? null,
      documentIds: [...new Set(request.documentIds ?? [])],
      where: request.where ? JSON.stringify(request.where) : null,
      placedBy: access.userId,
      placedAt: this.clock(),
      releasedBy: null,
      releasedAt: null,
      releaseReason: null,
    };
    await this.transactions.run(async (trx) => {
      // Waits for deletes that checked the holds before this one to commit (HeldDocuments).
      await this.holds.lockExclusive(trx, tenantId);
      await this.holds.insert(trx, hold);
      await this.audit.record(
        trx,
        'legal_hold_placed',
        access,
        hold.documentIds,
        auditDetail(hold),
      );
    });
    this.outbox.wake();
    this.logger.log(`hold ${hold.id} "${hold.name}" placed on ${scope} by ${access.userId}`);
    return toHoldView(hold);
  }

  async list(tenantId: TenantId, access: Access, query: HoldListQuery): Promise<HoldView[]> {
    requireAdmin(access);
    return (await this.holds.list(tenantId, query)).map((hold) => toHoldView(hold));
  }

  /** One hold; an active one with the number of documents it covers now. */
  async get(tenantId: TenantId, access: Access, id: string): Promise<HoldView> {
    requireAdmin(access);
    const hold = await this.holds.find(tenantId, id);
    if (!hold) throw holdNotFound(id);
    if (hold.releasedAt) return toHoldView(hold);
    return toHoldView(hold, await this.holds.countHeld(tenantId, activeHoldOf(hold)));
  }

  /** Ends a hold. Final: a released hold is 409 `hold_released`; place a new one instead. */
  async release(tenantId: TenantId, access: Access, id: string, reason: string): Promise<HoldView> {
    requireAdmin(access);
    const released = await this.transactions.run(async (trx) => {
      await this.holds.lockExclusive(trx, tenantId);
      const hold = await this.holds.find(tenantId, id, trx);
      if (!hold) throw holdNotFound(id);
      if (hold.releasedAt) {
        throw new LegalHoldError(
          LegalHoldErrorCode.AlreadyReleased,
          `hold ${id} ("${hold.name}") was released at ${hold.releasedAt.toISOString()}`,
        );
      }
      const done = await this.holds.release(trx, tenantId, id, {
        by: access.userId,
        at: this.clock(),
        reason,
      });
      await this.audit.record(trx, 'legal_hold_released', access, hold.documentIds, {
        ...auditDetail(hold),
        releaseReason: reason,
      });
      return done!;
    });
    this.outbox.wake();
    this.logger.log(`hold ${id} "${released.name}" released by ${access.userId}`);
    return toHoldView(released);
  }
}

function requireAdmin(access: Access): void {
  if (!access.isAdmin) {
    throw new LegalHoldError(
      LegalHoldErrorCode.PermissionDenied,
      'only a tenant admin may place, read or release legal holds',
    );
  }
}

const holdNotFound = (id: string) =>
  new LegalHoldError(LegalHoldErrorCode.NotFound, `hold ${id} not found`);

const auditDetail = (hold: HoldRecord) => ({
  holdId: hold.id,
  name: hold.name,
  scope: hold.scope,
  ...(hold.knowledgeBaseId ? { knowledgeBaseId: hold.knowledgeBaseId } : {}),
  ...(hold.where ? { where: hold.where } : {}),
});
