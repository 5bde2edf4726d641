import type { TenantId } from '@kb/contracts';

import type { Trx } from '../platform/transaction.runner';
import type { ActiveHold, HoldListQuery, HoldRecord } from './legal-hold.model';

/**
 * What every deletion path asks before it deletes (docs/adr/0052): which of these documents a
 * hold covers. It takes the tenant's hold lock in shared mode until `trx` ends, so a hold placed
 * concurrently waits for the delete to commit and a delete that started after the hold sees it.
 */
export abstract class HeldDocuments {
  /** The ids among `documentIds` that an active hold covers, each with the name of one hold. */
  abstract heldAmong(
    trx: Trx,
    tenantId: TenantId,
    documentIds: string[],
  ): Promise<Map<string, string>>;
  /** The tenant's active holds, under the same shared lock (for set-based statements). */
  abstract activeHolds(trx: Trx, tenantId: TenantId): Promise<ActiveHold[]>;
}

/** The `legal_holds` register (`SqlLegalHoldsRepository`; `InMemoryLegalHolds` in unit tests). */
export abstract class LegalHoldsRepository extends HeldDocuments {
  /** Takes the tenant's hold lock exclusively until `trx` ends: placing and releasing. */
  abstract lockExclusive(trx: Trx, tenantId: TenantId): Promise<void>;
  abstract insert(trx: Trx, hold: HoldRecord): Promise<void>;
  abstract find(tenantId: TenantId, id: string, trx?: Trx): Promise<HoldRecord | undefined>;
  /** Newest first. */
  abstract list(tenantId: TenantId, query: HoldListQuery): Promise<HoldRecord[]>;
  /** Marks an active hold released; undefined when it is not active (gone or released). */
  abstract release(
    trx: Trx,
    tenantId: TenantId,
    id: string,
    release: { by: string; at: Date; reason: string },
  ): Promise<HoldRecord | undefined>;
  /** How many of the tenant's documents the hold covers now. */
  abstract countHeld(tenantId: TenantId, hold: ActiveHold): Promise<number>;
}
