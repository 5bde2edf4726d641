import type { EditableAttributes, IndexSpace } from '@kb/contracts';

import type { ChunkRef, LexicalRecord, LexicalWrite } from './lexical-index';
import type { SnapshotSource } from './snapshot-options';

/**
 * The writes and reads `SnapshotLexicalIndex` passes to Postgres unchanged: everything but
 * search and the chunk-content reads it keeps in memory.
 */
export abstract class SourcePassThrough {
  protected constructor(protected readonly source: SnapshotSource) {}

  upsert(space: IndexSpace, records: LexicalWrite[]): Promise<void> {
    return this.source.upsert(space, records);
  }

  deleteDocument(space: IndexSpace, documentId: string, olderThan?: number): Promise<number> {
    return this.source.deleteDocument(space, documentId, olderThan);
  }

  deleteDocuments(space: IndexSpace, documentIds: string[]): Promise<number> {
    return this.source.deleteDocuments(space, documentIds);
  }

  documentVersions(space: IndexSpace): AsyncIterable<{ documentId: string; versions: number[] }> {
    return this.source.documentVersions(space);
  }

  setAttributes(
    space: IndexSpace,
    documentId: string,
    attributes: EditableAttributes,
  ): Promise<number> {
    return this.source.setAttributes(space, documentId, attributes);
  }

  setPrincipals(space: IndexSpace, documentId: string, principals: string[]): Promise<number> {
    return this.source.setPrincipals(space, documentId, principals);
  }

  countDocument(space: IndexSpace, documentId: string): Promise<number> {
    return this.source.countDocument(space, documentId);
  }

  matching(space: IndexSpace, query: string, chunks: ChunkRef[]): Promise<Set<string>> {
    return this.source.matching(space, query, chunks);
  }

  chunksAround(space: IndexSpace, anchors: ChunkRef[], radius: number): Promise<LexicalRecord[]> {
    return this.source.chunksAround(space, anchors, radius);
  }

  ping(): Promise<void> {
    return this.source.ping();
  }

  close(): Promise<void> {
    return this.source.close();
  }
}
