import { matchesDocumentFilter, type TenantId } from '@kb/contracts';

import type { DocumentRecord } from '../documents/document.model';
import {
  type ActiveHold,
  activeHoldOf,
  type HoldListQuery,
  type HoldRecord,
} from '../holds/legal-hold.model';
import { type HeldDocuments, LegalHoldsRepository } from '../holds/legal-holds.repository';
import type { Trx } from '../platform/transaction.runner';
import { type InMemoryDatabase, keyOf } from './in-memory.database';
import { openTrx } from './in-memory-transaction.runner';

/** No hold covers anything: for specs of code that asks but is not about holds. */
export const NO_HOLDS: HeldDocuments = {
  heldAmong: async () => new Map(),
  activeHolds: async () => [],
};

/** `legal_holds` in memory, over the documents of an `InMemoryDatabase`. */
export class InMemoryLegalHolds extends LegalHoldsRepository {
  readonly holds: HoldRecord[] = [];

  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async lockExclusive(trx: Trx): Promise<void> {
    openTrx(trx);
  }

  async activeHolds(trx: Trx, tenantId: TenantId): Promise<ActiveHold[]> {
    openTrx(trx);
    return this.holds
      .filter((h) => h.tenantId === tenantId && !h.releasedAt)
      .map((h) => activeHoldOf(h));
  }

  async heldAmong(
    trx: Trx,
    tenantId: TenantId,
    documentIds: string[],
  ): Promise<Map<string, string>> {
    const holds = await this.activeHolds(trx, tenantId);
    const held = new Map<string, string>();
    for (const id of documentIds) {
      const document = this.db.documents.get(keyOf(tenantId, id));
      if (!document) continue;
      const hold = holds.find((h) => covers(h, document));
      if (hold) held.set(id, hold.name);
    }
    return held;
  }

  async insert(trx: Trx, hold: HoldRecord): Promise<void> {
    openTrx(trx);
    this.holds.push({ ...hold });
  }

  async find(tenantId: TenantId, id: string): Promise<HoldRecord | undefined> {
    return this.holds.find((h) => h.tenantId === tenantId && h.id === id);
  }

  async list(tenantId: TenantId, query: HoldListQuery): Promise<HoldRecord[]> {
    return this.holds
      .filter((h) => h.tenantId === tenantId)
      .filter((h) => query.state === 'all' || (query.state === 'active') === !h.releasedAt)
      .sort((a, b) => b.placedAt.getTime() - a.placedAt.getTime())
      .slice(0, query.limit);
  }

  async release(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    release: { by: string; at: Date; reason: string },
  ): Promise<HoldRecord | undefined> {
    openTrx(trx);
    const hold = this.holds.find((h) => h.tenantId === tenantId && h.id === id && !h.releasedAt);
    if (!hold) return undefined;
    Object.assign(hold, {
      releasedBy: release.by,
      releasedAt: release.at,
      releaseReason: release.reason,
    });
    return hold;
  }

  async countHeld(tenantId: TenantId, hold: ActiveHold): Promise<number> {
    return [...this.db.documents.values()].filter((d) => d.tenantId === tenantId && covers(hold, d))
      .length;
  }
}

/** `holdCoversSql`'s semantics over a record. */
export function covers(hold: ActiveHold, d: DocumentRecord): boolean {
  switch (hold.scope) {
    case 'knowledge_base':
      return d.knowledgeBaseIds.includes(hold.knowledgeBaseId ?? '');
    case 'documents':
      return hold.documentIds.includes(d.id);
    case 'filter':
      return matchesDocumentFilter(hold.filter, {
        documentId: d.id,
        tags: d.tags,
        uploadedAt: d.createdAt.getTime(),
        metadata: d.metadata,
        status: d.status,
        contentType: d.contentType,
        createdAt: d.createdAt.getTime(),
        updatedAt: d.updatedAt.getTime(),
      });
  }
}
