import type { TenantId } from '@kb/contracts';

import { sqlOf, type Trx } from '../platform/transaction.runner';
import type { DocumentRecord } from './document.model';
import { toRecord } from './document-row.mapper';

/**
 * Sets a document's own retention date (docs/adr/0052). Not a change the indexes see: no meta
 * version, no event; `updated_at` stays, so retention counted from the last update does not
 * restart when a date is set.
 */
export async function setExpiry(
  trx: Trx,
  tenantId: TenantId,
  id: string,
  expiresAt: Date | null,
): Promise<DocumentRecord | undefined> {
  const row = await sqlOf(trx)
    .updateTable('documents')
    .set({ expires_at: expiresAt })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row ? toRecord(row) : undefined;
}
