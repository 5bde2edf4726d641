import { type RawBuilder, sql } from 'kysely';

import { documentFilterSql } from '../documents/document-filter.sql';
import type { ActiveHold } from './legal-hold.model';

/**
 * A hold as a condition on a `documents` row (unqualified column names: use it where `documents`
 * is the only table in scope). A knowledge-base hold covers the documents in it now; a filter hold
 * is the listing filter's own SQL (`documentFilterSql`), every value bound.
 */
export function holdCoversSql(hold: ActiveHold): RawBuilder<boolean> {
  switch (hold.scope) {
    case 'knowledge_base':
      return sql<boolean>`(knowledge_base_ids @> ARRAY[${hold.knowledgeBaseId}::text])`;
    case 'documents':
      return sql<boolean>`(id = ANY(${hold.documentIds}::uuid[]))`;
    case 'filter':
      return documentFilterSql(hold.filter);
  }
}

/** True when any of the holds covers the row; FALSE for none. */
export function anyHoldSql(holds: ActiveHold[]): RawBuilder<boolean> {
  if (holds.length === 0) return sql<boolean>`FALSE`;
  return sql<boolean>`(${sql.join(holds.map(holdCoversSql), sql` OR `)})`;
}

/** The name of the first hold covering the row, or NULL. */
export function holdNameSql(holds: ActiveHold[]): RawBuilder<string | null> {
  if (holds.length === 0) return sql<string | null>`NULL::text`;
  const arms = holds.map((hold) => sql`WHEN ${holdCoversSql(hold)} THEN ${hold.name}::text`);
  return sql<string | null>`(CASE ${sql.join(arms, sql` `)} END)`;
}
