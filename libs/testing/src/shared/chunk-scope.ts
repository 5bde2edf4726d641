import { type DocumentAttributes, type FilterNode, matchesFilter } from '@kb/contracts';

/** A chunk as both in-memory indexes keep it: its document, version and attributes. */
export interface ScopedChunk {
  documentId: string;
  documentVersion: number;
  attributes: DocumentAttributes;
}

/** What both index ports let a search narrow to, applied before top-k. */
export interface SearchScope {
  filter?: FilterNode | undefined;
  knowledgeBaseIds?: string[] | undefined;
  principals?: string[] | undefined;
}

const shares = (held: string[], wanted: string[]): boolean => held.some((v) => wanted.includes(v));

/**
 * Whether a chunk is in a search's scope, with the semantics the real adapters translate: any of
 * the knowledge bases (none named: all), any of the principals (absent: no ACL check), and the
 * filter as `matchesFilter` states it.
 */
export function inScope(chunk: ScopedChunk, scope: SearchScope): boolean {
  const { knowledgeBaseIds, principals, filter } = scope;
  if (knowledgeBaseIds?.length && !shares(chunk.attributes.knowledgeBaseIds, knowledgeBaseIds)) {
    return false;
  }
  if (principals && !shares(chunk.attributes.principals, principals)) return false;
  return matchesFilter(filter, {
    documentId: chunk.documentId,
    tags: chunk.attributes.tags,
    uploadedAt: chunk.attributes.uploadedAt,
    metadata: chunk.attributes.metadata,
  });
}

/** Each document once, by id, with the versions it holds in ascending order (orphan sweep). */
export function documentVersionsOf(
  chunks: ScopedChunk[],
): Array<{ documentId: string; versions: number[] }> {
  const versions = new Map<string, Set<number>>();
  for (const chunk of chunks) {
    versions.set(
      chunk.documentId,
      (versions.get(chunk.documentId) ?? new Set()).add(chunk.documentVersion),
    );
  }
  return [...versions]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([documentId, held]) => ({ documentId, versions: [...held].sort((a, b) => a - b) }));
}
