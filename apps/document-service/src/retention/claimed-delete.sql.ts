import type { TenantId } from '@kb/contracts';
import { type RawBuilder, sql } from 'kysely';

import type { DeletedDocument } from '../documents/documents.repository';
import { anyHoldSql } from '../holds/held-documents.sql';
import type { ActiveHold } from '../holds/legal-hold.model';
import { sqlOf, type Trx } from '../platform/transaction.runner';

/**
 * Deletes up to `limit` of the tenant's documents matching `condition` (a condition on
 * `documents`) that no hold covers, in the caller's transaction: retention's and erasure's
 * statement (docs/adr/0052). The rows are claimed `FOR UPDATE SKIP LOCKED`, so two workers never
 * delete one document twice and a document someone is changing waits for the next batch.
 */
export async function deleteClaimed(
  trx: Trx,
  tenantId: TenantId,
  condition: RawBuilder<boolean>,
  holds: ActiveHold[],
  limit: number,
): Promise<DeletedDocument[]> {
  const claimed = sql`SELECT id FROM documents
    WHERE tenant_id = ${tenantId} AND ${condition} AND NOT ${anyHoldSql(holds)}
    ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
  const rows = await sqlOf(trx)
    .deleteFrom('documents')
    .where('tenant_id', '=', tenantId)
    .where(sql<boolean>`id IN (${claimed})`)
    .returning(['id', 'sha256', 'blob_key', 'meta_version'])
    .execute();
  // The delete is each document's last change: its event carries the version after it.
  return rows.map((row) => ({
    id: row.id,
    sha256: row.sha256,
    blobKey: row.blob_key,
    metaVersion: row.meta_version + 1,
  }));
}
