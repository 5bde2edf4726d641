import type { DocumentAttributes, EditableAttributes, FilterNode } from '@kb/contracts';
import type { Index, PineconeRecord, RecordMetadata } from '@pinecone-database/pinecone';

import { PINECONE_FIELDS, type PineconeFilter, toPineconeFilter } from './pinecone-filter';
import type { DocumentVersions } from './vector-store';

/** What both Pinecone indexes (dense vectors, sparse lexical vectors) keep on each chunk. */
export interface ChunkMetadata extends RecordMetadata {
  documentId: string;
  documentVersion: number;
  chunkIndex: number;
  startOffset: number;
  endOffset: number;
  kbIds: string[];
  tags: string[];
  uploadedAt: number;
  principals: string[];
}

export const UPSERT_BATCH = 100;
const DELETE_BATCH = 1000;
/** Documents whose ids are listed at once when many are deleted together. */
const LIST_CONCURRENCY = 8;

/** The version inside a record id `<document>#<version>#<chunk>`. */
const versionOf = (id: string): number => Number(id.split('#')[1]);

/** User metadata under its prefix, so it cannot shadow the adapter's own fields. */
const prefixed = (metadata: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(metadata).map(([key, value]) => [
      `${PINECONE_FIELDS.metadataPrefix}${key}`,
      value,
    ]),
  );

/** The filter fields of a chunk's metadata: its document's knowledge bases, tags, metadata, readers. */
export function attributeFields(attributes: DocumentAttributes): RecordMetadata {
  return {
    [PINECONE_FIELDS.knowledgeBaseIds]: attributes.knowledgeBaseIds,
    [PINECONE_FIELDS.tags]: attributes.tags,
    [PINECONE_FIELDS.uploadedAt]: attributes.uploadedAt,
    [PINECONE_FIELDS.principals]: attributes.principals,
    ...(prefixed(attributes.metadata) as RecordMetadata),
  };
}

/** A search's scope as one Pinecone filter: knowledge bases, the caller's principals, the filter. */
export function scopeFilter(scope: {
  knowledgeBaseIds?: string[] | undefined;
  principals?: string[] | undefined;
  filter?: FilterNode | undefined;
}): PineconeFilter | undefined {
  const clauses: PineconeFilter[] = [];
  if (scope.knowledgeBaseIds?.length) {
    clauses.push({ [PINECONE_FIELDS.knowledgeBaseIds]: { $in: scope.knowledgeBaseIds } });
  }
  if (scope.principals) {
    clauses.push({ [PINECONE_FIELDS.principals]: { $in: scope.principals } });
  }
  if (scope.filter) clauses.push(toPineconeFilter(scope.filter));
  return clauses.length > 1 ? { $and: clauses } : clauses[0];
}

/**
 * A document's records in one Pinecone index, by namespace (one per index space): listing,
 * in-place ACL and attribute changes, removal. Shared by the dense store and the sparse lexical
 * index, whose records carry the same ids and filter fields.
 */
export class PineconeDocuments {
  constructor(private readonly index: Index<ChunkMetadata>) {}

  /**
   * Rewrites each chunk's metadata whole (fetch, then upsert with the same dense or sparse
   * values): Pinecone's update merges metadata, so a metadata key the document no longer has
   * would otherwise stay. The principals are never the ones read back (review M8): a fetch may
   * answer from before the last `setPrincipals`, and writing that back would re-grant a revoked
   * reader. They are the recorded ones when given; without them (no ACL change recorded yet) the
   * read ones are kept.
   */
  async setAttributes(
    namespace: string,
    documentId: string,
    attributes: EditableAttributes,
    principals?: string[],
  ): Promise<number> {
    const ids = await this.listDocumentIds(namespace, documentId);
    const ns = this.index.namespace(namespace);
    for (let i = 0; i < ids.length; i += UPSERT_BATCH) {
      const { records } = await ns.fetch({ ids: ids.slice(i, i + UPSERT_BATCH) });
      const rewritten = Object.values(records ?? {}).flatMap(
        (record): Array<PineconeRecord<ChunkMetadata>> => {
          const held = record.values?.length || record.sparseValues?.indices.length;
          if (!record.metadata || !held) return [];
          const kept = Object.fromEntries(
            Object.entries(record.metadata).filter(
              ([key]) =>
                !key.startsWith(PINECONE_FIELDS.metadataPrefix) &&
                !(principals && key === PINECONE_FIELDS.principals),
            ),
          );
          return [
            {
              id: record.id,
              ...(record.values?.length ? { values: record.values } : {}),
              ...(record.sparseValues ? { sparseValues: record.sparseValues } : {}),
              metadata: {
                ...kept,
                ...(principals ? { [PINECONE_FIELDS.principals]: principals } : {}),
                [PINECONE_FIELDS.knowledgeBaseIds]: attributes.knowledgeBaseIds,
                [PINECONE_FIELDS.tags]: attributes.tags,
                ...prefixed(attributes.metadata),
              } as ChunkMetadata,
            },
          ];
        },
      );
      if (rewritten.length > 0) await ns.upsert({ records: rewritten });
    }
    return ids.length;
  }

  async setPrincipals(
    namespace: string,
    documentId: string,
    principals: string[],
  ): Promise<number> {
    const ids = await this.listDocumentIds(namespace, documentId);
    const ns = this.index.namespace(namespace);
    for (const id of ids) {
      await ns.update({ id, metadata: { [PINECONE_FIELDS.principals]: principals } });
    }
    return ids.length;
  }

  async deleteDocument(namespace: string, documentId: string, olderThan?: number): Promise<number> {
    const ids = (await this.listDocumentIds(namespace, documentId)).filter(
      (id) => olderThan === undefined || versionOf(id) < olderThan,
    );
    const ns = this.index.namespace(namespace);
    for (let i = 0; i < ids.length; i += DELETE_BATCH) {
      await ns.deleteMany({ ids: ids.slice(i, i + DELETE_BATCH) });
    }
    return ids.length;
  }

  /**
   * Pinecone deletes by id only (serverless indexes take no metadata filter): each document's ids
   * are listed by prefix, a few documents at a time, and deleted `DELETE_BATCH` ids per call.
   */
  async deleteDocuments(namespace: string, documentIds: string[]): Promise<number> {
    const ns = this.index.namespace(namespace);
    const queue = [...documentIds];
    const pending: string[] = [];
    let removed = 0;
    const flush = async (all: boolean) => {
      while (pending.length >= DELETE_BATCH || (all && pending.length > 0)) {
        const ids = pending.splice(0, DELETE_BATCH);
        await ns.deleteMany({ ids });
        removed += ids.length;
      }
    };
    const lister = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        pending.push(...(await this.listDocumentIds(namespace, id)));
        await flush(false);
      }
    };
    await Promise.all(Array.from({ length: LIST_CONCURRENCY }, lister));
    await flush(true);
    return removed;
  }

  async countDocument(namespace: string, documentId: string): Promise<number> {
    return (await this.listDocumentIds(namespace, documentId)).length;
  }

  /**
   * Lists every id of the namespace (Pinecone lists ids, not documents), so a document whose ids
   * span pages is still reported once, with all its versions. Memory grows with the documents of
   * one namespace, not with their chunks.
   */
  async *documentVersions(namespace: string): AsyncIterable<DocumentVersions> {
    const ns = this.index.namespace(namespace);
    const versions = new Map<string, Set<number>>();
    let paginationToken: string | undefined;
    do {
      const page = await ns.listPaginated(paginationToken ? { paginationToken } : {});
      for (const { id } of page.vectors ?? []) {
        if (!id) continue;
        const documentId = id.slice(0, id.indexOf('#'));
        const seen = versions.get(documentId) ?? new Set<number>();
        seen.add(versionOf(id));
        versions.set(documentId, seen);
      }
      paginationToken = page.pagination?.next;
    } while (paginationToken);
    for (const documentId of [...versions.keys()].sort()) {
      yield { documentId, versions: [...versions.get(documentId)!].sort((a, b) => a - b) };
    }
  }

  /** Lists ids by prefix: serverless indexes cannot delete by metadata filter. */
  async listDocumentIds(namespace: string, documentId: string): Promise<string[]> {
    const ns = this.index.namespace(namespace);
    const ids: string[] = [];
    let paginationToken: string | undefined;
    do {
      const page = await ns.listPaginated({
        prefix: `${documentId}#`,
        ...(paginationToken ? { paginationToken } : {}),
      });
      ids.push(...(page.vectors ?? []).flatMap((v) => (v.id ? [v.id] : [])));
      paginationToken = page.pagination?.next;
    } while (paginationToken);
    return ids;
  }
}
