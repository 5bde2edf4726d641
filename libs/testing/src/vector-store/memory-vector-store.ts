import type { EditableAttributes, IndexSpace } from '@kb/contracts';
import {
  type ChunkKey,
  type DocumentVersions,
  vectorId,
  type VectorMatch,
  type VectorQuery,
  type VectorRecord,
  type VectorStore,
} from '@kb/vector-store';

import { documentVersionsOf, inScope } from '../shared/chunk-scope';

/** An in-memory `VectorStore`: exact cosine search over every record of the space. */
export class MemoryVectorStore implements VectorStore {
  private readonly spaces = new Map<IndexSpace, Map<string, VectorRecord>>();
  private ready = false;

  async ensureReady(_dimension: number): Promise<void> {
    this.ready = true;
  }

  isReady(): boolean {
    return this.ready;
  }

  async upsert(space: IndexSpace, records: VectorRecord[]): Promise<void> {
    const held = this.spaces.get(space) ?? new Map<string, VectorRecord>();
    this.spaces.set(space, held);
    for (const record of records) held.set(vectorId(record), structuredClone(record));
  }

  async query(space: IndexSpace, query: VectorQuery): Promise<VectorMatch[]> {
    return this.records(space)
      .filter((record) => inScope(record, query))
      .map(({ vector, attributes: _attributes, ...match }) => ({
        ...match,
        ...(query.withText === false ? { title: '', text: '' } : {}),
        score: cosine(query.vector, vector),
      }))
      .sort((a, b) => b.score - a.score)
      .slice(0, query.topK);
  }

  async fetchVectors(space: IndexSpace, chunks: ChunkKey[]): Promise<Map<string, number[]>> {
    const held = this.spaces.get(space);
    const found = new Map<string, number[]>();
    for (const chunk of chunks) {
      const record = held?.get(vectorId(chunk));
      if (record) found.set(vectorId(chunk), [...record.vector]);
    }
    return found;
  }

  async setPrincipals(
    space: IndexSpace,
    documentId: string,
    principals: string[],
  ): Promise<number> {
    const records = this.ofDocument(space, documentId);
    for (const record of records) record.attributes.principals = [...principals];
    return records.length;
  }

  async setAttributes(
    space: IndexSpace,
    documentId: string,
    attributes: EditableAttributes,
  ): Promise<number> {
    const records = this.ofDocument(space, documentId);
    for (const record of records) {
      record.attributes = { ...record.attributes, ...structuredClone(attributes) };
    }
    return records.length;
  }

  async deleteDocument(space: IndexSpace, documentId: string, olderThan?: number): Promise<number> {
    const held = this.spaces.get(space);
    let removed = 0;
    for (const record of this.ofDocument(space, documentId)) {
      if (olderThan !== undefined && record.documentVersion >= olderThan) continue;
      held?.delete(vectorId(record));
      removed++;
    }
    return removed;
  }

  async deleteDocuments(space: IndexSpace, documentIds: string[]): Promise<number> {
    let removed = 0;
    for (const documentId of new Set(documentIds)) {
      removed += await this.deleteDocument(space, documentId);
    }
    return removed;
  }

  async countDocument(space: IndexSpace, documentId: string): Promise<number> {
    return this.ofDocument(space, documentId).length;
  }

  async *documentVersions(space: IndexSpace): AsyncIterable<DocumentVersions> {
    yield* documentVersionsOf(this.records(space));
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  private records(space: IndexSpace): VectorRecord[] {
    return [...(this.spaces.get(space)?.values() ?? [])];
  }

  private ofDocument(space: IndexSpace, documentId: string): VectorRecord[] {
    return this.records(space).filter((record) => record.documentId === documentId);
  }
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * (b[i] ?? 0);
    normA += a[i]! ** 2;
    normB += (b[i] ?? 0) ** 2;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}
