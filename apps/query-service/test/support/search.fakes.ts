/**
 * Small in-memory stand-ins for the ports the search steps use, typed against those ports, for
 * the unit specs beside the code. (libs/testing will hold full in-memory adapters.)
 */
import type { DocumentView } from '@kb/api-client';
import type {
  ChunkRef,
  LexicalIndex,
  LexicalMatch,
  LexicalQuery,
  LexicalRecord,
} from '@kb/lexical-index';
import type { ChunkKey, VectorMatch, VectorQuery, VectorStore } from '@kb/vector-store';

import type { SearchCache } from '../../src/cache/search.cache';
import { DocumentServiceError } from '../../src/documents/documents.errors';
import { chunkKey, type SearchHit } from '../../src/search/search.model';
import type { DocumentReader } from '../../src/search/steps/hit-details.step';

/** Chunk `chunkIndex` of document d1, version 1, as either index returns it. */
export const newMatch = (
  chunkIndex: number,
  score: number,
  overrides: Partial<VectorMatch> = {},
): VectorMatch & LexicalMatch => ({
  documentId: 'd1',
  documentVersion: 1,
  chunkIndex,
  title: 't',
  text: `chunk ${chunkIndex}`,
  startOffset: 0,
  endOffset: 1,
  score,
  ...overrides,
});

/** The same chunk as a search hit found by semantic search. */
export const newHit = (
  chunkIndex: number,
  score: number,
  overrides: Partial<SearchHit> = {},
): SearchHit => ({
  ...newMatch(chunkIndex, score),
  strategies: ['semantic'],
  isMatch: true,
  ...overrides,
});

/**
 * The Redis cache as Maps: entries, and the mirrored generations by tenant (raised, never
 * lowered, never expiring: a test removes one from `generations` to model the expiry).
 */
export function memoryCache() {
  const entries = new Map<string, string>();
  const generations = new Map<string, number>();
  const rounds = { lookups: 0, raises: 0 };
  const cache: SearchCache = {
    get: async (key) => entries.get(key),
    set: async (key, value) => void entries.set(key, value),
    lookup: async (tenantId, key, also) => {
      rounds.lookups++;
      return {
        generation: generations.get(tenantId),
        value: entries.get(key),
        ...(also ? { also: entries.get(also) } : {}),
      };
    },
    raiseGeneration: async (tenantId, generation) => {
      rounds.raises++;
      generations.set(tenantId, Math.max(generations.get(tenantId) ?? 0, generation));
    },
    counters: { hits: 0, misses: 0, errors: 0 },
    isReady: true,
    close: async () => undefined,
  };
  return { cache, entries, generations, rounds };
}

export interface IndexContents {
  /** What vector search answers, in every space. */
  vector?: VectorMatch[];
  /** What BM25 search answers, in every space. */
  lexical?: LexicalMatch[];
  /** Stored vectors by chunk index, for MMR. */
  stored?: Record<number, number[]>;
  /** Every side of that index rejects, as in an outage. */
  down?: { vector?: boolean; lexical?: boolean };
}

/** Two documents of four chunks each, d1 #0..3 and d2 #0..3: what `chunksAround` reads. */
const DOCUMENTS: LexicalRecord[] = ['d1', 'd2'].flatMap((documentId) =>
  [0, 1, 2, 3].map((chunkIndex) => {
    const { score: _score, ...record } = newMatch(chunkIndex, 0, { documentId });
    return record;
  }),
);

/** The vector store and the lexical index, answering from `contents` and recording each call. */
export function fakeIndexes(contents: IndexContents = {}) {
  const calls = {
    query: [] as Array<{ space: string; query: VectorQuery }>,
    search: [] as Array<{ space: string; query: LexicalQuery }>,
    fetchVectors: [] as Array<{ space: string; chunks: ChunkKey[] }>,
    chunksAround: [] as Array<{ space: string; anchors: ChunkRef[] }>,
    locations: [] as Array<{ space: string; chunks: ChunkRef[] }>,
  };
  const vectors: Pick<VectorStore, 'query' | 'fetchVectors'> = {
    query: async (space, query) => {
      calls.query.push({ space, query });
      if (contents.down?.vector) throw new Error('vector store down');
      return contents.vector ?? [];
    },
    fetchVectors: async (space, chunks) => {
      calls.fetchVectors.push({ space, chunks });
      if (contents.down?.vector) throw new Error('vector store down');
      return new Map(
        chunks.flatMap((c) => {
          const stored = contents.stored?.[c.chunkIndex];
          return stored ? [[chunkKey(c), stored] as const] : [];
        }),
      );
    },
  };
  const lexical: Pick<LexicalIndex, 'search' | 'chunksAround' | 'locations'> = {
    search: async (space, query) => {
      calls.search.push({ space, query });
      if (contents.down?.lexical) throw new Error('postgres down');
      return contents.lexical ?? [];
    },
    chunksAround: async (space, anchors, radius) => {
      calls.chunksAround.push({ space, anchors });
      if (contents.down?.lexical) throw new Error('postgres down');
      return DOCUMENTS.filter((c) =>
        anchors.some(
          (a) => a.documentId === c.documentId && Math.abs(a.chunkIndex - c.chunkIndex) <= radius,
        ),
      );
    },
    // Every chunk of every document starts on page chunkIndex + 1, under one heading.
    locations: async (space, chunks) => {
      calls.locations.push({ space, chunks });
      if (contents.down?.lexical) throw new Error('postgres down');
      return new Map(
        chunks.map((c) => [chunkKey(c), { page: c.chunkIndex + 1, headingPath: ['Intro'] }]),
      );
    },
  };
  return { vectors, lexical, calls };
}

/** A document as document-service returns it, for the hit-details step. */
export const newDocumentView = (
  id: string,
  overrides: Partial<DocumentView> = {},
): DocumentView => ({
  id,
  title: 't',
  filename: `${id}.md`,
  contentType: 'text/markdown',
  sizeBytes: 10,
  sha256: 'x',
  version: 1,
  status: 'indexed',
  failure: null,
  chunkCount: 4,
  metadata: { team: 'search' },
  tags: ['guide'],
  knowledgeBaseIds: [],
  tenantId: 't1',
  explicitKnowledgeBaseIds: [],
  ownerId: 'alice',
  acl: { users: [], groups: [], roles: [], tenant: true },
  stageTimes: {},
  externalId: null,
  state: 'active',
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-02T00:00:00.000Z',
  ...overrides,
});

/**
 * document-service's reads: known documents answer, `gone` ones are 404, and everything fails
 * when `down`; each read is recorded with the token it carried.
 */
export function fakeDocuments(
  records: DocumentView[] = [newDocumentView('d1'), newDocumentView('d2')],
  options: { down?: boolean } = {},
) {
  const reads: Array<{ token: string; id: string }> = [];
  /** Calls made to document-service: one per `get`, one per `getMany`. */
  const calls = { get: 0, getMany: 0 };
  const reader: DocumentReader = {
    get: async (caller, id) => {
      calls.get++;
      reads.push({ token: caller.token, id });
      if (options.down) throw DocumentServiceError.unavailable('document-service is unreachable');
      const record = records.find((r) => r.id === id);
      if (!record)
        throw DocumentServiceError.relayed(404, 'document_not_found', 'no such document');
      return record;
    },
    getMany: async (caller, ids) => {
      calls.getMany++;
      for (const id of ids) reads.push({ token: caller.token, id });
      if (options.down) throw DocumentServiceError.unavailable('document-service is unreachable');
      return new Map(records.filter((r) => ids.includes(r.id)).map((r) => [r.id, r]));
    },
  };
  return { reader, reads, calls };
}
