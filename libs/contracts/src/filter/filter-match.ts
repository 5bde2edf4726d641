import type {
  DocumentFilterField,
  DocumentFilterNode,
  FilterableFields,
  FilterNode,
  MetadataValue,
  ScalarValue,
} from './filter';

/** What a document-listing filter is evaluated against: a document's row. */
export interface DocumentFilterableFields extends FilterableFields {
  status: string;
  contentType: string;
  /** Milliseconds since the epoch (the same as `uploadedAt`). */
  createdAt: number;
  updatedAt: number;
}

/**
 * A metadata key's value, from the record's own keys only: `metadata.constructor` (or `toString`,
 * `valueOf`…) is not a key a document has, and SQL (`?`, `->`) and Pinecone see no such key
 * either. Read through the prototype, it existed on every record in memory (review L1).
 */
function ownMetadata(record: FilterableFields, key: string): MetadataValue | undefined {
  return Object.hasOwn(record.metadata, key) ? record.metadata[key] : undefined;
}

/** The value(s) a field holds on a record: list fields hold many, a missing metadata key none. */
function valuesOf(
  field: DocumentFilterField,
  record: FilterableFields | DocumentFilterableFields,
): ScalarValue[] | undefined {
  const doc = record as Partial<DocumentFilterableFields>;
  switch (field.kind) {
    case 'document_id':
      return [record.documentId];
    case 'tags':
      return record.tags;
    case 'uploaded_at':
      return [record.uploadedAt];
    case 'status':
      return doc.status === undefined ? undefined : [doc.status];
    case 'content_type':
      return doc.contentType === undefined ? undefined : [doc.contentType];
    case 'created_at':
      return doc.createdAt === undefined ? undefined : [doc.createdAt];
    case 'updated_at':
      return doc.updatedAt === undefined ? undefined : [doc.updatedAt];
    case 'metadata': {
      const value = ownMetadata(record, field.key);
      if (value === undefined) return undefined;
      return Array.isArray(value) ? value : [value];
    }
  }
}

/**
 * The reference semantics, which every backend's translation reproduces:
 * - a list-valued field (tags, a list in metadata) matches `$eq v` when it contains v, and `$in`
 *   when it shares a value with the list;
 * - `$ne` and `$nin` are the exact negations of `$eq` and `$in`, so a record without the field
 *   matches them;
 * - values compare with their type: the number 5 never equals the string "5";
 * - a range operator matches numbers only.
 */
export function matchesFilter(node: FilterNode | undefined, record: FilterableFields): boolean {
  return matches(node, record);
}

/** `matchesFilter` for a document listing's filter: the reference its SQL reproduces. */
export function matchesDocumentFilter(
  node: DocumentFilterNode | undefined,
  record: DocumentFilterableFields,
): boolean {
  return matches(node, record);
}

function matches(
  node: DocumentFilterNode | undefined,
  record: FilterableFields | DocumentFilterableFields,
): boolean {
  if (!node) return true;
  switch (node.kind) {
    case 'and':
      return node.children.every((child) => matches(child, record));
    case 'or':
      return node.children.some((child) => matches(child, record));
    case 'exists':
      return (ownMetadata(record, node.field.key) !== undefined) === node.exists;
    case 'compare': {
      const held = valuesOf(node.field, record) ?? [];
      const wanted = Array.isArray(node.value) ? node.value : [node.value];
      const equal = held.some((v) => wanted.some((w) => v === w));
      switch (node.operator) {
        case '$eq':
        case '$in':
          return equal;
        case '$ne':
        case '$nin':
          return !equal;
        default: {
          const bound = node.value as number;
          return held.some(
            (v) =>
              typeof v === 'number' &&
              (node.operator === '$gt'
                ? v > bound
                : node.operator === '$gte'
                  ? v >= bound
                  : node.operator === '$lt'
                    ? v < bound
                    : v <= bound),
          );
        }
      }
    }
  }
}
