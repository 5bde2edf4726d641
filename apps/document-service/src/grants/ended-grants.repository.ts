import type { TenantId } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { type Kysely, sql } from 'kysely';

import type { DocumentDatabase } from '../platform/db.types';
import { DB } from '../platform/tokens';

/** Where the ended-grant job finds its work (docs/adr/0054). */
export interface EndedGrantDocuments {
  /** Up to `limit` documents, of any tenant, whose ACL has an entry that ended at `now`. */
  documentsWithEnded(now: Date, limit: number): Promise<Array<{ tenantId: TenantId; id: string }>>;
}

/** Reads only rows whose ACL has ends at all (the partial index `documents_acl_ending`). */
@Injectable()
export class EndedGrantsRepository implements EndedGrantDocuments {
  constructor(@Inject(DB) private readonly db: Kysely<DocumentDatabase>) {}

  async documentsWithEnded(now: Date, limit: number) {
    const rows = await this.db
      .selectFrom('documents')
      .select(['tenant_id', 'id'])
      .where(sql<boolean>`acl ? 'until'`)
      .where(
        sql<boolean>`EXISTS (SELECT 1 FROM jsonb_each_text(documents.acl -> 'until') AS e (p, ends)
                      WHERE e.ends::timestamptz <= ${now})`,
      )
      .limit(limit)
      .execute();
    return rows.map((row) => ({ tenantId: row.tenant_id as TenantId, id: row.id }));
  }
}
