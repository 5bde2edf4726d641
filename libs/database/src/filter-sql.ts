import type { FilterField, FilterNode, ScalarValue } from '@kb/contracts';
import { type RawBuilder, sql } from 'kysely';

/** Where each filter field lives in a table: trusted SQL expressions written by the caller's code. */
export interface FilterColumns {
  documentId: string;
  /** A `text[]` column. */
  tags: string;
  /** A `bigint` column of epoch milliseconds. */
  uploadedAt: string;
  /** A `jsonb` object column. */
  metadata: string;
}

const RANGE_SQL = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

/**
 * Translates a parsed filter into a SQL boolean expression, a fragment of a Kysely `sql` template.
 * Every value, and every metadata key, is a bound parameter: nothing from the request is spliced
 * into SQL. The semantics are `matchesFilter`'s, which the conformance suites check on every
 * backend.
 */
export function filterToSql(
  node: FilterNode | undefined,
  columns: FilterColumns,
): RawBuilder<boolean> {
  if (!node) return sql<boolean>`TRUE`;
  switch (node.kind) {
    case 'and':
    case 'or':
      return sql<boolean>`(${sql.join(
        node.children.map((child) => filterToSql(child, columns)),
        sql.raw(node.kind === 'and' ? ' AND ' : ' OR '),
      )})`;
    case 'exists': {
      const test = sql<boolean>`jsonb_exists(${sql.raw(columns.metadata)}, ${bind(node.field.key, 'text')})`;
      return node.exists ? test : sql<boolean>`NOT ${test}`;
    }
    case 'compare': {
      const values = Array.isArray(node.value) ? node.value : [node.value];
      if (node.operator in RANGE_SQL) {
        const op = RANGE_SQL[node.operator as keyof typeof RANGE_SQL];
        return rangeSql(node.field, op, node.value as number, columns);
      }
      const equal = equalitySql(node.field, values, columns);
      return node.operator === '$eq' || node.operator === '$in'
        ? equal
        : sql<boolean>`NOT ${equal}`;
    }
  }
}

/** A bound parameter with its cast: `$n::cast`. */
const bind = (value: unknown, cast: string): RawBuilder<unknown> => sql`${value}::${sql.raw(cast)}`;

/** True when the field holds any of the values; never NULL, so NOT is its exact negation. */
function equalitySql(
  field: FilterField,
  values: ScalarValue[],
  columns: FilterColumns,
): RawBuilder<boolean> {
  switch (field.kind) {
    case 'document_id':
      return sql`(${sql.raw(columns.documentId)} = ANY(${bind(values, 'text[]')}))`;
    case 'tags':
      return sql`(${sql.raw(columns.tags)} && ${bind(values, 'text[]')})`;
    case 'uploaded_at':
      return sql`(${sql.raw(columns.uploadedAt)} = ANY(${bind(values, 'bigint[]')}))`;
    case 'metadata': {
      // jsonb containment compares with type (5 is not "5") and treats a list as containing
      // each of its elements, which is the language's list semantics.
      const value = sql`(${sql.raw(columns.metadata)} -> ${bind(field.key, 'text')})`;
      return sql`coalesce((SELECT bool_or(${value} @> v) FROM jsonb_array_elements(${bind(
        JSON.stringify(values),
        'jsonb',
      )}) AS v), false)`;
    }
  }
}

function rangeSql(
  field: FilterField,
  op: string,
  bound: number,
  columns: FilterColumns,
): RawBuilder<boolean> {
  if (field.kind === 'uploaded_at') {
    return sql`(${sql.raw(columns.uploadedAt)} ${sql.raw(op)} ${bind(bound, 'bigint')})`;
  }
  if (field.kind !== 'metadata') throw new Error(`range over ${field.kind} is not in the language`);
  const value = sql`(${sql.raw(columns.metadata)} -> ${bind(field.key, 'text')})`;
  // jsonb orders numbers numerically; the type test keeps strings and lists out of a range.
  return sql`coalesce(jsonb_typeof(${value}) = 'number' AND ${value} ${sql.raw(op)} ${bind(
    String(bound),
    'jsonb',
  )}, false)`;
}
