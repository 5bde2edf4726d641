import { Pinecone, type Index, type RecordMetadata } from '@pinecone-database/pinecone';
import type { VectorMatch, VectorQuery, VectorRecord, VectorStore } from './vector-store';
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
}

const UPSERT_BATCH = 100;
const DELETE_BATCH = 1000;

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
          },
        })),
      });
    }
  }

  async query(namespace: string, query: VectorQuery): Promise<VectorMatch[]> {
    const response = await this.index.namespace(namespace).query({
      vector: query.vector,
      topK: query.topK,
      includeMetadata: true,
    });
    return (response.matches ?? []).flatMap((match) =>
      match.metadata ? [{ ...match.metadata, score: match.score ?? 0 }] : [],
    );
  }

  async deleteDocument(
    namespace: string,
    documentId: string,
    keepVersion?: number,
  ): Promise<number> {
    const ids = (await this.listDocumentIds(namespace, documentId)).filter(
      (id) => keepVersion === undefined || !id.startsWith(`${documentId}#${keepVersion}#`),
    );
    const ns = this.index.namespace(namespace);
    for (let i = 0; i < ids.length; i += DELETE_BATCH) {
      await ns.deleteMany({ ids: ids.slice(i, i + DELETE_BATCH) });
    }
    return ids.length;
  }

  async countDocument(namespace: string, documentId: string): Promise<number> {
    return (await this.listDocumentIds(namespace, documentId)).length;
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
