import type { FilterField, FilterNode } from '@kb/contracts';

/** Metadata field names in Pinecone; user metadata is prefixed so it cannot shadow ours. */
export const PINECONE_FIELDS = {
  documentId: 'documentId',
  tags: 'tags',
  uploadedAt: 'uploadedAt',
  knowledgeBaseIds: 'kbIds',
  principals: 'principals',
  metadataPrefix: 'meta_',
} as const;

export type PineconeFilter = Record<string, unknown>;

function fieldName(field: FilterField): string {
  switch (field.kind) {
    case 'document_id':
      return PINECONE_FIELDS.documentId;
    case 'tags':
      return PINECONE_FIELDS.tags;
    case 'uploaded_at':
      return PINECONE_FIELDS.uploadedAt;
    case 'metadata':
      return `${PINECONE_FIELDS.metadataPrefix}${field.key}`;
  }
}

/**
 * Translates a parsed filter into Pinecone's metadata filter. The language was cut to what
 * Pinecone can express, so this is a renaming of fields; values stay JSON values, never text.
 */
export function toPineconeFilter(node: FilterNode): PineconeFilter {
  switch (node.kind) {
    case 'and':
      return { $and: node.children.map(toPineconeFilter) };
    case 'or':
      return { $or: node.children.map(toPineconeFilter) };
    case 'exists':
      return { [fieldName(node.field)]: { $exists: node.exists } };
    case 'compare':
      return { [fieldName(node.field)]: { [node.operator]: node.value } };
  }
}
