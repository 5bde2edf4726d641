import type { TenantId } from '@kb/contracts';
import { Injectable } from '@nestjs/common';

import type { DocumentRecord } from '../documents/document.model';
import { toRecord } from '../documents/document-row.mapper';
import { sqlOf, type Trx } from '../platform/transaction.runner';

/** The repair's SQL: the tenant's documents a page at a time, by id. */
@Injectable()
export class RepairRepository {
  async page(
    trx: Trx,
    tenantId: TenantId,
    after: string | undefined,
    limit: number,
  ): Promise<DocumentRecord[]> {
    let query = sqlOf(trx)
      .selectFrom('documents')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('id')
      .limit(limit);
    if (after !== undefined) query = query.where('id', '>', after);
    return (await query.execute()).map(toRecord);
  }
}
