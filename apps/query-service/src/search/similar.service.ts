import type { Caller } from '@kb/auth';
import { activeOnly, type FilterNode, type IndexSpace, tenantSpace } from '@kb/contracts';
import type { LexicalIndex } from '@kb/lexical-index';
import type { VectorStore } from '@kb/vector-store';
import { Inject, Injectable } from '@nestjs/common';

import { DocumentsClient } from '../documents/documents.client';
import { LEXICAL_INDEX, VECTOR_STORE } from '../platform/tokens';
import { HybridRetrieval, type SpaceToSearch } from './hybrid.retrieval';
import { QueryEmbedder } from './query.embedder';
import { SearchError, SearchErrorCode } from './search.errors';
import { chunkKey, MAX_RESULT_WINDOW, type SearchHit } from './search.model';
import { latestVersionsOnly, mergeSpaces } from './search.service';
import type { SimilarRequest, SimilarResponse } from './similar.model';
import { HitDetailsStep } from './steps/hit-details.step';
import { describeOutcome } from './steps/step.model';

/** A document's chunks averaged, at most this many: enough for its gist, bounded in cost. */
const MAX_SOURCE_CHUNKS = 256;
/** Chunks fetched per document wanted when hits are grouped by document. */
const CHUNKS_PER_DOCUMENT = 5;

/** The mean of unit vectors, renormalized: the direction a document's chunks share. */
export function centroid(vectors: number[][]): number[] {
  const sum = vectors[0]!.map((_, i) => vectors.reduce((acc, v) => acc + v[i]!, 0));
  const norm = Math.hypot(...sum) || 1;
  return sum.map((x) => x / norm);
}

/**
 * Similarity search: by the vectors alone (a document has no words to match as a whole), in
 * each index space with its own model, the source document excluded inside the vector search
 * and the caller's ACL applied there too; `documentId` is read through document-service first,
 * so a document the caller cannot read is 404 as everywhere else.
 */
@Injectable()
export class SimilarService {
  constructor(
    private readonly retrieval: HybridRetrieval,
    private readonly embedder: QueryEmbedder,
    @Inject(VECTOR_STORE) private readonly vectors: Pick<VectorStore, 'query' | 'fetchVectors'>,
    @Inject(LEXICAL_INDEX) private readonly lexical: Pick<LexicalIndex, 'countDocument'>,
    @Inject(DocumentsClient) private readonly documents: Pick<DocumentsClient, 'get'>,
    private readonly details: HitDetailsStep,
  ) {}

  async similar(
    caller: Caller,
    request: SimilarRequest,
    principals: string[] | undefined,
  ): Promise<SimilarResponse> {
    const started = performance.now();
    const spaces = await this.retrieval.spacesFor(caller.tenantId, request.knowledgeBaseIds);
    const probes = request.documentId
      ? await this.documentProbes(caller, request.documentId, spaces)
      : await Promise.all(
          spaces.map(async ({ space, model }) => ({
            space,
            vector: await this.embedder.embed(request.text!, model),
          })),
        );
    const depth =
      request.unit === 'documents'
        ? Math.min(request.topK * CHUNKS_PER_DOCUMENT, MAX_RESULT_WINDOW)
        : request.topK;
    // Inactive documents stay indexed but are never found (docs/adr/0025).
    const filter = activeOnly(excluding(request.filter, request.documentId));
    const bySpace = await Promise.all(
      probes.map(async ({ space, vector }) => ({
        space,
        hits: (
          await this.vectors.query(space, {
            vector,
            topK: depth,
            filter,
            knowledgeBaseIds: request.knowledgeBaseIds,
            principals,
          })
        ).map((match): SearchHit => ({ ...match, strategies: ['semantic'], isMatch: true })),
      })),
    );
    const merged = latestVersionsOnly(
      bySpace.length === 1 ? bySpace[0]!.hits : mergeSpaces(bySpace.map((s) => s.hits)),
    );
    const seen = new Set<string>();
    const page = (
      request.unit === 'documents'
        ? merged.filter((hit) => !seen.has(hit.documentId) && seen.add(hit.documentId))
        : merged
    ).slice(0, request.topK);
    const spaceOf = new Map(
      bySpace.flatMap(({ space, hits }) => hits.map((hit) => [chunkKey(hit), space] as const)),
    );
    const described = await this.details.run(
      page,
      (hit) => spaceOf.get(chunkKey(hit)) ?? tenantSpace(caller.tenantId),
      caller,
    );
    return {
      hits: described.hits,
      tookMs: Math.round((performance.now() - started) * 100) / 100,
      unit: request.unit,
      details: describeOutcome(described.outcome),
    };
  }

  /** The document's mean vector in each space that holds it (404 if the caller cannot read it). */
  private async documentProbes(
    caller: Caller,
    documentId: string,
    spaces: SpaceToSearch[],
  ): Promise<Array<{ space: IndexSpace; vector: number[] }>> {
    const document = await this.documents.get(caller, documentId);
    const probes = await Promise.all(
      spaces.map(async ({ space }) => {
        const count = Math.min(
          await this.lexical.countDocument(space, documentId),
          MAX_SOURCE_CHUNKS,
        );
        const keys = Array.from({ length: count }, (_, chunkIndex) => ({
          documentId,
          documentVersion: document.version,
          chunkIndex,
        }));
        const stored = [...(await this.vectors.fetchVectors(space, keys)).values()];
        return stored.length > 0 ? [{ space, vector: centroid(stored) }] : [];
      }),
    );
    const found = probes.flat();
    if (found.length === 0) {
      throw new SearchError(
        SearchErrorCode.SourceNotIndexed,
        `document ${documentId} has no indexed chunks in the knowledge bases searched`,
      );
    }
    return found;
  }
}

/** The request's filter, and not the source document. */
function excluding(filter: FilterNode | undefined, documentId: string | undefined) {
  if (!documentId) return filter;
  const notSource: FilterNode = {
    kind: 'compare',
    field: { kind: 'document_id' },
    operator: '$ne',
    value: documentId,
  };
  return filter ? { kind: 'and' as const, children: [filter, notSource] } : notSource;
}
