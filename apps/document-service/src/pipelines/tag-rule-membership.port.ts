import type { TenantId } from '@kb/contracts';

import type { Trx } from '../platform/transaction.runner';

/**
 * Moves documents in or out of knowledge bases after their tag rules changed. Declared here and
 * implemented in `documents/`, so that `knowledge-bases/` does not import it.
 */
export abstract class TagRuleMembership {
  /**
   * Brings the tenant's documents in line with its tag rules in `trx` (so a rule and the
   * membership change it causes commit together), with their events; returns the changed ids.
   */
  abstract applyTagRules(trx: Trx, tenantId: TenantId, now: Date): Promise<string[]>;
}
