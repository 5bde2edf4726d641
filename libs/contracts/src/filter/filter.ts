/**
 * The one filter language of the knowledge base (docs/adr/0007): a Mongo-style JSON object over
 * a chunk's document id, tags, upload time and metadata. It is parsed once at the edge into a
 * small tree; each backend translates the tree (SQL with bound parameters, Pinecone's filter
 * JSON), and `matchesFilter` states the semantics every translation must reproduce.
 *
 *   { "tags": "finance", "metadata.year": { "$gte": 2020 },
 *     "$or": [{ "document_id": { "$in": ["…"] } }, { "metadata.draft": { "$exists": false } }] }
 */

/** A metadata value that can be filtered: what Pinecone can store, and so what every backend keeps. */
export type MetadataValue = string | number | boolean | string[];
export type ScalarValue = string | number | boolean;

/** What a filter is evaluated against: one chunk's document-level attributes. */
export interface FilterableFields {
  documentId: string;
  tags: string[];
  /** Milliseconds since the epoch. */
  uploadedAt: number;
  metadata: Record<string, MetadataValue>;
}

export type ComparisonOperator =
  '$eq' | '$ne' | '$in' | '$nin' | '$gt' | '$gte' | '$lt' | '$lte' | '$exists';

export type FilterField =
  | { kind: 'document_id' }
  | { kind: 'tags' }
  | { kind: 'uploaded_at' }
  | { kind: 'metadata'; key: string };

/**
 * The fields a document listing filters on besides a chunk's (`GET /v1/documents?where=`): the
 * document's pipeline status, its content type and its creation and last-change times.
 * `uploaded_at` is the same time as `created_at` there.
 */
export type DocumentFilterField =
  | FilterField
  | { kind: 'status' }
  | { kind: 'content_type' }
  | { kind: 'created_at' }
  | { kind: 'updated_at' };

export type FilterNode<F extends { kind: string } = FilterField> =
  | { kind: 'and' | 'or'; children: FilterNode<F>[] }
  | {
      kind: 'compare';
      field: F;
      operator: Exclude<ComparisonOperator, '$exists'>;
      value: ScalarValue | ScalarValue[];
    }
  | { kind: 'exists'; field: Extract<F, { kind: 'metadata' }>; exists: boolean };

/** A parsed document-listing filter: the language over `DocumentFilterField`s. */
export type DocumentFilterNode = FilterNode<DocumentFilterField>;

/** Which fields a filter may name: a chunk's (search) or a document's (listing). */
type FieldSet = 'chunk' | 'document';
const CHUNK_FIELDS = ['document_id', 'tags', 'uploaded_at'] as const;
const DOCUMENT_FIELDS = [
  ...CHUNK_FIELDS,
  'status',
  'content_type',
  'created_at',
  'updated_at',
] as const;
const TIME_FIELDS = new Set(['uploaded_at', 'created_at', 'updated_at']);

export const FILTER_LIMITS = {
  depth: 6,
  conditions: 64,
  listValues: 256,
  metadataKey: /^[A-Za-z][A-Za-z0-9_-]{0,63}$/,
  stringLength: 512,
} as const;

const COMPARISONS = new Set<ComparisonOperator>([
  '$eq',
  '$ne',
  '$in',
  '$nin',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$exists',
]);
const RANGE = new Set(['$gt', '$gte', '$lt', '$lte']);

/** A filter the caller must fix; `path` points into the JSON (e.g. `$or[1].tags.$in`). */
export class FilterError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`filter${path ? ` at ${path}` : ''}: ${reason}`);
    this.name = 'FilterError';
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/**
 * Parses and validates a filter. `undefined`, `null` and `{}` mean no filter. Anything the
 * language does not define (an unknown operator or field, a range over strings, a list where a
 * value belongs, a nesting too deep) is a FilterError naming where it is.
 */
export function parseFilter(input: unknown): FilterNode | undefined {
  return parseWith(input, 'chunk') as FilterNode | undefined;
}

/**
 * The same language for listing documents: besides a chunk's fields, `status`, `content_type`
 * (strings) and `created_at`, `updated_at` (times, like `uploaded_at`).
 */
export function parseDocumentFilter(input: unknown): DocumentFilterNode | undefined {
  return parseWith(input, 'document');
}

function parseWith(input: unknown, fields: FieldSet): DocumentFilterNode | undefined {
  if (input === undefined || input === null) return undefined;
  const counter = { conditions: 0, fields };
  const node = parseObject(input, '', 1, counter);
  return node.kind !== 'compare' && node.kind !== 'exists' && node.children.length === 0
    ? undefined
    : node;
}

function parseObject(
  input: unknown,
  path: string,
  depth: number,
  counter: Counter,
): DocumentFilterNode {
  if (!isPlainObject(input)) throw new FilterError(path, 'must be a JSON object');
  if (depth > FILTER_LIMITS.depth) {
    throw new FilterError(path, `nested deeper than ${FILTER_LIMITS.depth} levels`);
  }
  const children: DocumentFilterNode[] = [];
  for (const [key, value] of Object.entries(input)) {
    if (key === '$and' || key === '$or') {
      const where = join(path, key);
      if (!Array.isArray(value) || value.length === 0) {
        throw new FilterError(where, 'must be a non-empty array of filters');
      }
      const parts = value.map((part, i) => {
        // An empty term would compile to an empty group, which no backend accepts.
        if (isPlainObject(part) && Object.keys(part).length === 0) {
          throw new FilterError(`${where}[${i}]`, 'must not be an empty filter');
        }
        return parseObject(part, `${where}[${i}]`, depth + 1, counter);
      });
      children.push({ kind: key === '$and' ? 'and' : 'or', children: parts });
    } else if (key.startsWith('$')) {
      throw new FilterError(join(path, key), `unknown logical operator (use $and or $or)`);
    } else {
      children.push(...parseField(key, value, join(path, key), counter));
    }
  }
  return children.length === 1 ? children[0]! : { kind: 'and', children };
}

interface Counter {
  conditions: number;
  fields: FieldSet;
}

function parseFieldName(name: string, path: string, fields: FieldSet): DocumentFilterField {
  const known: readonly string[] = fields === 'document' ? DOCUMENT_FIELDS : CHUNK_FIELDS;
  if (known.includes(name)) return { kind: name } as DocumentFilterField;
  if (name.startsWith('metadata.')) {
    const key = name.slice('metadata.'.length);
    if (!FILTER_LIMITS.metadataKey.test(key)) {
      throw new FilterError(
        path,
        'a metadata key starts with a letter and holds up to 64 letters, digits, "_" or "-"',
      );
    }
    return { kind: 'metadata', key };
  }
  throw new FilterError(
    path,
    `unknown field "${name}" (fields: ${known.join(', ')}, metadata.<key>)`,
  );
}

function parseField(
  name: string,
  condition: unknown,
  path: string,
  counter: Counter,
): DocumentFilterNode[] {
  const field = parseFieldName(name, path, counter.fields);
  // `{ field: value }` is shorthand for `{ field: { $eq: value } }`.
  const operators = isPlainObject(condition) ? condition : { $eq: condition };
  const entries = Object.entries(operators);
  if (entries.length === 0) throw new FilterError(path, 'names no operator');
  return entries.map(([operator, value]) => {
    const where = isPlainObject(condition) ? join(path, operator) : path;
    if (!COMPARISONS.has(operator as ComparisonOperator)) {
      throw new FilterError(
        where,
        `unknown operator "${operator}" (operators: ${[...COMPARISONS].join(' ')})`,
      );
    }
    if (++counter.conditions > FILTER_LIMITS.conditions) {
      throw new FilterError(where, `more than ${FILTER_LIMITS.conditions} conditions`);
    }
    if (operator === '$exists') {
      if (field.kind !== 'metadata') {
        throw new FilterError(where, '$exists applies to metadata.<key> fields only');
      }
      if (typeof value !== 'boolean') throw new FilterError(where, '$exists takes true or false');
      return { kind: 'exists', field, exists: value };
    }
    const op = operator as Exclude<ComparisonOperator, '$exists'>;
    return { kind: 'compare', field, operator: op, value: parseValue(field, op, value, where) };
  });
}

function parseValue(
  field: DocumentFilterField,
  operator: Exclude<ComparisonOperator, '$exists'>,
  value: unknown,
  path: string,
): ScalarValue | ScalarValue[] {
  if (operator === '$in' || operator === '$nin') {
    if (!Array.isArray(value) || value.length === 0) {
      throw new FilterError(path, `${operator} takes a non-empty array`);
    }
    if (value.length > FILTER_LIMITS.listValues) {
      throw new FilterError(path, `${operator} takes at most ${FILTER_LIMITS.listValues} values`);
    }
    return value.map((item, i) => parseScalar(field, operator, item, `${path}[${i}]`));
  }
  return parseScalar(field, operator, value, path);
}

function parseScalar(
  field: DocumentFilterField,
  operator: string,
  value: unknown,
  path: string,
): ScalarValue {
  if (TIME_FIELDS.has(field.kind)) {
    // Times are compared as epoch milliseconds; an ISO 8601 timestamp is accepted too.
    const millis = typeof value === 'string' ? Date.parse(value) : value;
    if (typeof millis !== 'number' || !Number.isSafeInteger(millis)) {
      throw new FilterError(
        path,
        `${field.kind} takes an ISO 8601 timestamp or integer epoch milliseconds`,
      );
    }
    return millis;
  }
  if (RANGE.has(operator)) {
    if (field.kind !== 'metadata') {
      throw new FilterError(path, `${operator} applies to times and numeric metadata only`);
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new FilterError(path, `${operator} takes a number`);
    }
    return value;
  }
  if (field.kind !== 'metadata' && typeof value !== 'string') {
    throw new FilterError(path, `${field.kind} takes string values`);
  }
  if (typeof value === 'string') {
    if (value.length > FILTER_LIMITS.stringLength) {
      throw new FilterError(path, `strings are at most ${FILTER_LIMITS.stringLength} characters`);
    }
    return value;
  }
  if (typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) {
    return value;
  }
  throw new FilterError(path, 'takes a string, a finite number or a boolean');
}
