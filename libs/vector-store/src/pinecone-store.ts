import type { EditableAttributes } from '@kb/contracts';
import { raceAbort } from '@kb/database';
import { type Index, Pinecone, type RecordMetadata } from '@pinecone-database/pinecone';

import { PINECONE_FIELDS, type PineconeFilter, toPineconeFilter } from './pinecone-filter';
import type {
  ChunkKey,
  DocumentVersions,
  VectorMatch,
  VectorQuery,
  VectorRecord,
  VectorStore,
} from './vector-store';
import { vectorId } from './vector-store';

export interface PineconeOptions {
  apiKey: string;
  /** Data-plane host of the index (from the console or describeIndex). */
  indexHost: string;
  /** Control-plane URL; only set to reach a non-default controller. */
  controllerHostUrl?: string;
  /** Replaces global fetch; tests point it at the fake data plane. */
  fetchApi?: typeof fetch;
}

interface ChunkMetadata extends RecordMetadata {
  documentId: string;
  documentVersion: number;
  chunkIndex: number;
  title: string;
  text: string;
  startOffset: number;
  endOffset: number;
  kbIds: string[];
  tags: string[];
  uploadedAt: number;
  principals: string[];
}

const UPSERT_BATCH = 100;

/** User metadata under its prefix, so it cannot shadow the adapter's own fields. */
const prefixed = (metadata: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(metadata).map(([key, value]) => [
      `${PINECONE_FIELDS.metadataPrefix}${key}`,
      value,
    ]),
  );
const DELETE_BATCH = 1000;
/** Documents whose ids are listed at once when many are deleted together. */
const LIST_CONCURRENCY = 8;

/** The version inside a record id `<document>#<version>#<chunk>`. */
const versionOf = (id: string): number => Number(id.split('#')[1]);

/** The managed vector store: one Pinecone namespace per tenant. */
export class PineconeStore implements VectorStore {
  private readonly index: Index<ChunkMetadata>;

  constructor(options: PineconeOptions) {
    const client = new Pinecone({
      apiKey: options.apiKey,
      ...(options.controllerHostUrl ? { controllerHostUrl: options.controllerHostUrl } : {}),
      ...(options.fetchApi ? { fetchApi: options.fetchApi } : {}),
    });
    this.index = client.index<ChunkMetadata>({ host: options.indexHost });
  }

  async ensureReady(): Promise<void> {
    // Pinecone indexes are created by the operator with the model's dimension; nothing to prepare.
  }

  async upsert(namespace: string, records: VectorRecord[]): Promise<void> {
    const ns = this.index.namespace(namespace);
    for (let i = 0; i < records.length; i += UPSERT_BATCH) {
      await ns.upsert({
        records: records.slice(i, i + UPSERT_BATCH).map((record) => ({
          id: vectorId(record),
          values: record.vector,
          metadata: {
            documentId: record.documentId,
            documentVersion: record.documentVersion,
            chunkIndex: record.chunkIndex,
            title: record.title,
            text: record.text,
            startOffset: record.startOffset,
            endOffset: record.endOffset,
            [PINECONE_FIELDS.knowledgeBaseIds]: record.attributes.knowledgeBaseIds,
            [PINECONE_FIELDS.tags]: record.attributes.tags,
            [PINECONE_FIELDS.uploadedAt]: record.attributes.uploadedAt,
            [PINECONE_FIELDS.principals]: record.attributes.principals,
            ...prefixed(record.attributes.metadata),
          } as ChunkMetadata,
        })),
      });
    }
  }

  async query(namespace: string, query: VectorQuery): Promise<VectorMatch[]> {
    const clauses: PineconeFilter[] = [];
    if (query.knowledgeBaseIds?.length) {
      clauses.push({ [PINECONE_FIELDS.knowledgeBaseIds]: { $in: query.knowledgeBaseIds } });
    }
    if (query.principals) {
      clauses.push({ [PINECONE_FIELDS.principals]: { $in: query.principals } });
    }
    if (query.filter) clauses.push(toPineconeFilter(query.filter));
    const filter = clauses.length > 1 ? { $and: clauses } : clauses[0];
    // The Pinecone client takes no AbortSignal: past the budget the answer is given up on
    // (docs/adr/0042); the request itself runs to its end.
    const response = await raceAbort(
      this.index.namespace(namespace).query({
        vector: query.vector,
        topK: query.topK,
        includeMetadata: true,
        ...(filter ? { filter } : {}),
      }),
      query.signal,
    );
    return (response.matches ?? []).flatMap((match) =>
      match.metadata
        ? [
            {
              documentId: match.metadata.documentId,
              documentVersion: match.metadata.documentVersion,
              chunkIndex: match.metadata.chunkIndex,
              title: match.metadata.title,
              text: match.metadata.text,
              startOffset: match.metadata.startOffset,
              endOffset: match.metadata.endOffset,
              score: match.score ?? 0,
            },
          ]
        : [],
    );
  }

  async fetchVectors(namespace: string, chunks: ChunkKey[]): Promise<Map<string, number[]>> {
    const found = new Map<string, number[]>();
    if (chunks.length === 0) return found;
    const response = await this.index.namespace(namespace).fetch({ ids: chunks.map(vectorId) });
    for (const [id, record] of Object.entries(response.records ?? {})) {
      if (record.values) found.set(id, record.values);
    }
    return found;
  }

  /**
   * Rewrites each chunk's metadata whole (fetch, then upsert with the same values): Pinecone's
   * update merges metadata, so a metadata key the document no longer has would otherwise stay.
   * The principals are never the ones read back (review M8): a fetch may answer from before the
   * last `setPrincipals`, and writing that back would re-grant a revoked reader. They are the
   * recorded ones when given; without them (no ACL change recorded yet) the read ones are kept.
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
      await ns.upsert({
        records: Object.values(records ?? {}).flatMap((record) => {
          if (!record.metadata || !record.values) return [];
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
              values: record.values,
              metadata: {
                ...kept,
                ...(principals ? { [PINECONE_FIELDS.principals]: principals } : {}),
                [PINECONE_FIELDS.knowledgeBaseIds]: attributes.knowledgeBaseIds,
                [PINECONE_FIELDS.tags]: attributes.tags,
                ...prefixed(attributes.metadata),
              } as ChunkMetadata,
            },
          ];
        }),
      });
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

  isReady(): boolean {
    return true;
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

  async ping(): Promise<void> {
    await this.index.describeIndexStats();
  }

  async close(): Promise<void> {}

  /** Lists ids by prefix: serverless indexes cannot delete by metadata filter. */
  private async listDocumentIds(namespace: string, documentId: string): Promise<string[]> {
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
