import { type RawBuilder, sql } from 'kysely';

/**
 * When a `documents` row is due for deletion (docs/adr/0052), or NULL when never: the earlier of
 * its own `expires_at` and the date its knowledge bases' policies agree on. A document in several
 * knowledge bases is kept as long as any of them keeps it: the policy date exists only when every
 * one of its knowledge bases has a policy, and it is the latest of theirs (counted from upload or
 * from the last update, as each says). Outer columns are qualified: hold conditions (unqualified)
 * may sit beside it.
 */
export const dueAtSql: RawBuilder<Date | null> = sql<Date | null>`LEAST(documents.expires_at, (
  SELECT CASE WHEN count(*) = cardinality(documents.knowledge_base_ids) THEN max(
    CASE kb.retention_from WHEN 'updated' THEN documents.updated_at ELSE documents.created_at END
      + make_interval(days => kb.retention_days)) END
  FROM knowledge_bases kb
  WHERE kb.tenant_id = documents.tenant_id
    AND kb.id = ANY(documents.knowledge_base_ids)
    AND kb.retention_days IS NOT NULL))`;

/**
 * Cheap pre-filter of the documents that may be due: a date of their own that has passed, or a
 * knowledge base with a policy. The partial index `documents_expiring` serves the first; the
 * second is asked only of the tenants with a policy (`= ANY(ARRAY(...))`, so the planner ORs the
 * two indexes): as a correlated subquery on every row alone it read the whole table on each
 * retention tick, 228–444 ms a minute at 86,317 documents against 1.1 ms (docs/performance.md).
 */
export const mayBeDueSql = (now: Date): RawBuilder<boolean> =>
  sql<boolean>`(documents.expires_at <= ${now} OR (documents.tenant_id = ANY(ARRAY(
      SELECT tenant_id FROM knowledge_bases WHERE retention_days IS NOT NULL))
    AND documents.knowledge_base_ids && ARRAY(
      SELECT kb.id FROM knowledge_bases kb
      WHERE kb.tenant_id = documents.tenant_id AND kb.retention_days IS NOT NULL)))`;
