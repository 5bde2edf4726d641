import type { EditableAttributes } from '@kb/contracts';
import { raceAbort } from '@kb/database';
import { type Index, Pinecone } from '@pinecone-database/pinecone';

import {
  attributeFields,
  type ChunkMetadata,
  PineconeDocuments,
  scopeFilter,
  UPSERT_BATCH,
} from './pinecone-documents';
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

/** The dense index's records also hold the chunk's title and text. */
interface DenseMetadata extends ChunkMetadata {
  title: string;
  text: string;
}

/** The managed vector store: one Pinecone namespace per tenant. */
export class PineconeStore implements VectorStore {
  private readonly index: Index<DenseMetadata>;
  private readonly documents: PineconeDocuments;

  constructor(options: PineconeOptions) {
    const client = new Pinecone({
      apiKey: options.apiKey,
      ...(options.controllerHostUrl ? { controllerHostUrl: options.controllerHostUrl } : {}),
      ...(options.fetchApi ? { fetchApi: options.fetchApi } : {}),
    });
    this.index = client.index<DenseMetadata>({ host: options.indexHost });
    this.documents = new PineconeDocuments(this.index as unknown as Index<ChunkMetadata>);
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
            ...attributeFields(record.attributes),
          } as DenseMetadata,
        })),
      });
    }
  }

  async query(namespace: string, query: VectorQuery): Promise<VectorMatch[]> {
    const filter = scopeFilter(query);
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

  /** Rewrites each chunk's metadata whole, `principals` as recorded (pinecone-documents.ts, review M8). */
  setAttributes(
    namespace: string,
    documentId: string,
    attributes: EditableAttributes,
    principals?: string[],
  ): Promise<number> {
    return this.documents.setAttributes(namespace, documentId, attributes, principals);
  }

  setPrincipals(namespace: string, documentId: string, principals: string[]): Promise<number> {
    return this.documents.setPrincipals(namespace, documentId, principals);
  }

  deleteDocument(namespace: string, documentId: string, olderThan?: number): Promise<number> {
    return this.documents.deleteDocument(namespace, documentId, olderThan);
  }

  deleteDocuments(namespace: string, documentIds: string[]): Promise<number> {
    return this.documents.deleteDocuments(namespace, documentIds);
  }

  countDocument(namespace: string, documentId: string): Promise<number> {
    return this.documents.countDocument(namespace, documentId);
  }

  isReady(): boolean {
    return true;
  }

  documentVersions(namespace: string): AsyncIterable<DocumentVersions> {
    return this.documents.documentVersions(namespace);
  }

  async ping(): Promise<void> {
    await this.index.describeIndexStats();
  }

  async close(): Promise<void> {}
}
