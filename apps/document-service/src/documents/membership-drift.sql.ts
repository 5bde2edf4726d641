import type { DocumentMetadata, TenantId } from '@kb/contracts';
import { type RawBuilder, sql } from 'kysely';

import { sqlOf, type Trx } from '../platform/transaction.runner';
import type { MembershipDrift } from './documents.repository';

/**
 * The documents in `scope` whose knowledge bases differ from their explicit ones plus those whose
 * tag rule matches their tags (`by_rule`, by id). Reconciliation uses it across tenants.
 */
export function membershipDrift(scope: RawBuilder<boolean>): RawBuilder<unknown> {
  return sql`
    WITH expected AS (
      SELECT d.tenant_id, d.id, d.inactive, d.tags, d.metadata, d.knowledge_base_ids,
             d.explicit_knowledge_base_ids AS explicit,
             ARRAY(SELECT k.id FROM knowledge_bases k
                   WHERE k.tenant_id = d.tenant_id AND k.tag_rule && d.tags
                   ORDER BY k.id) AS by_rule
      FROM documents d
      WHERE ${scope}
    )
    SELECT tenant_id, id, inactive, tags, metadata, knowledge_base_ids, explicit, by_rule FROM expected
    WHERE NOT (knowledge_base_ids @> (explicit || by_rule)
               AND (explicit || by_rule) @> knowledge_base_ids)`;
}

/** The documents of the tenant whose knowledge bases drifted from their explicit ones and tag rules. */
export async function driftedMemberships(trx: Trx, tenantId: TenantId): Promise<MembershipDrift[]> {
  const drifted = await sql<{
    id: string;
    inactive: boolean;
    tags: string[];
    metadata: DocumentMetadata;
    knowledge_base_ids: string[];
    explicit: string[];
    by_rule: string[];
  }>`${membershipDrift(sql<boolean>`d.tenant_id = ${tenantId}`)} ORDER BY id`.execute(sqlOf(trx));
  return drifted.rows.map((row) => ({
    id: row.id,
    inactive: row.inactive,
    tags: row.tags,
    metadata: row.metadata,
    knowledgeBaseIds: row.knowledge_base_ids,
    explicit: row.explicit,
    byRule: row.by_rule,
  }));
}
