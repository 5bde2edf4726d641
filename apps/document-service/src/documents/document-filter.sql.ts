import type { DocumentFilterField, DocumentFilterNode, ScalarValue } from '@kb/contracts';
import { type RawBuilder, sql } from 'kysely';

/**
 * A document-listing filter (docs/adr/0007, docs/adr/0024) as a SQL condition on `documents`.
 * Every value and metadata key is a bound parameter; the semantics are `matchesDocumentFilter`'s
 * (the unit spec and documents.repository.int-spec check the same cases on both).
 */
export function documentFilterSql(node: DocumentFilterNode | undefined): RawBuilder<boolean> {
  if (!node) return sql<boolean>`TRUE`;
  switch (node.kind) {
    case 'and':
    case 'or':
      return sql<boolean>`(${sql.join(
        node.children.map(documentFilterSql),
        node.kind === 'and' ? sql` AND ` : sql` OR `,
      )})`;
    case 'exists': {
      const test = sql<boolean>`jsonb_exists(metadata, ${node.field.key}::text)`;
      return node.exists ? test : sql<boolean>`NOT ${test}`;
    }
    case 'compare': {
      const values = Array.isArray(node.value) ? node.value : [node.value];
      switch (node.operator) {
        case '$eq':
        case '$in':
          return equality(node.field, values);
        case '$ne':
        case '$nin':
          return sql<boolean>`NOT ${equality(node.field, values)}`;
        default:
          return range(node.field, node.operator, node.value as number);
      }
    }
  }
}

/** Epoch milliseconds of a time column (the language compares times as milliseconds). */
const millis = (column: 'created_at' | 'updated_at') =>
  sql`floor(extract(epoch from ${sql.ref(column)}) * 1000)::bigint`;

/** True when the field holds any of the values; never NULL, so NOT is its exact negation. */
function equality(field: DocumentFilterField, values: ScalarValue[]): RawBuilder<boolean> {
  switch (field.kind) {
    case 'document_id':
      // Compared as uuid, so the primary key finds them: `id::text = ANY(…)` read every row the
      // caller may see, 9 ms against 0.1 for a search's hit details in a CISI tenant (ADR 29).
      // An id is only ever equal to the canonical lower-case form, so nothing else can match.
      return sql<boolean>`(id = ANY(${values.filter(isCanonicalUuid)}::uuid[]))`;
    case 'tags':
      return sql<boolean>`(tags && ${values}::text[])`;
    case 'status':
      return sql<boolean>`(status = ANY(${values}::text[]))`;
    case 'content_type':
      return sql<boolean>`(content_type = ANY(${values}::text[]))`;
    case 'uploaded_at':
    case 'created_at':
      return sql<boolean>`(${millis('created_at')} = ANY(${values}::bigint[]))`;
    case 'updated_at':
      return sql<boolean>`(${millis('updated_at')} = ANY(${values}::bigint[]))`;
    case 'metadata': {
      // jsonb containment compares with type (5 is not "5") and treats a list as containing each
      // of its elements: the language's list semantics, as in libs/database's translation.
      const value = sql`(metadata -> ${field.key}::text)`;
      return sql<boolean>`coalesce((SELECT bool_or(${value} @> v) FROM jsonb_array_elements(${JSON.stringify(
        values,
      )}::jsonb) AS v), false)`;
    }
  }
}

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The text of a uuid as Postgres prints it; other spellings Postgres would accept never matched. */
const isCanonicalUuid = (value: ScalarValue): value is string =>
  typeof value === 'string' && CANONICAL_UUID.test(value);

const RANGE = { $gt: sql`>`, $gte: sql`>=`, $lt: sql`<`, $lte: sql`<=` } as const;

function range(field: DocumentFilterField, operator: string, bound: number): RawBuilder<boolean> {
  const op = RANGE[operator as keyof typeof RANGE];
  switch (field.kind) {
    case 'uploaded_at':
    case 'created_at':
      return sql<boolean>`(${millis('created_at')} ${op} ${bound}::bigint)`;
    case 'updated_at':
      return sql<boolean>`(${millis('updated_at')} ${op} ${bound}::bigint)`;
    case 'metadata': {
      const value = sql`(metadata -> ${field.key}::text)`;
      // jsonb orders numbers numerically; the type test keeps strings and lists out of a range.
      return sql<boolean>`coalesce(jsonb_typeof(${value}) = 'number' AND ${value} ${op} ${String(
        bound,
      )}::jsonb, false)`;
    }
    default:
      throw new Error(`a range over ${field.kind} is not in the language`);
  }
}
