import { activeOnly, type IndexSpace, type TenantId, tenantSpace } from '@kb/contracts';
import type { DocumentIndexState, KnowledgeBaseSpace } from '@kb/index-state';
import type { LexicalIndex } from '@kb/lexical-index';
import { timedStage } from '@kb/observability';
import type { VectorQuery, VectorStore } from '@kb/vector-store';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';

import { INDEX_STATE, LEXICAL_INDEX, SEARCH_TUNING, VECTOR_STORE } from '../platform/tokens';
import type { FirstFusionListener } from './candidates';
import { type PrefetchedEmbedding, QueryEmbedder } from './query.embedder';
import { deadlineExceeded, type SearchBudget } from './search.budget';
import { SearchError, SearchErrorCode } from './search.errors';
import type { DegradedReason, SearchHit, SearchRequest, SearchTuning } from './search.model';
import { SpaceSearch } from './space.search';

export { exposedLexicalScore } from './candidates';

/** One index space per pipeline (chunker, model): its name and the model its vectors come from. */
export type SpaceToSearch = KnowledgeBaseSpace;

/** Where the index spaces of a tenant's knowledge bases are recorded (the index state). */
export type IndexSpaceReader = Pick<DocumentIndexState, 'knowledgeBaseSpaces'>;

/** Who may see what, and which knowledge bases: applied by both strategies before top-k. */
export type SearchScope = Omit<VectorQuery, 'vector' | 'topK'>;

export interface Retrieved {
  /** Each space's fused hits, in the order the spaces were given; none where both sides failed. */
  bySpace: Array<{ space: IndexSpace; hits: SearchHit[] }>;
  /** The first outage met, when one strategy of some space failed: the answer is degraded. */
  degradedReason: DegradedReason | undefined;
  /**
   * True when some strategy returned all `depth` candidates it was asked for: more chunks match
   * than were ranked, so a count of the ranked hits is a lower bound only.
   */
  saturated: boolean;
}

/** Tenant and knowledge-base selections whose models `embedEarly` remembers, at most. */
const REMEMBERED_SELECTIONS = 10_000;
const modelsKey = (tenantId: TenantId, knowledgeBaseIds: string[]): string =>
  `${tenantId}\u0000${[...knowledgeBaseIds].sort().join('\u0000')}`;

/**
 * Hybrid retrieval over the index spaces of a search: in each space, vector and BM25 search run
 * in parallel and are fused (adaptive convex combination by default, or fixed α, or RRF). When one side fails, the
 * other's results come back marked degraded; when every side of every space fails, 503 (504
 * when one ran out of time, docs/adr/0042).
 */
@Injectable()
export class HybridRetrieval {
  private readonly logger = new Logger(HybridRetrieval.name);
  /**
   * Per tenant and knowledge-base selection, whether its spaces were all embedded by the main
   * model when last read (`embedEarly`'s guess), the most recently read last.
   */
  private readonly mainModelOnly = new LRUCache<string, boolean>({ max: REMEMBERED_SELECTIONS });
  /** The search of one index space: both sides, feedback, texts and fusion. */
  private readonly oneSpace: SpaceSearch;

  constructor(
    private readonly embedder: QueryEmbedder,
    @Inject(VECTOR_STORE) vectors: Pick<VectorStore, 'query'>,
    /**
     * `texts` absent (some test doubles): the vector store sends the semantic candidates' texts;
     * `termVectors` absent: no pseudo-relevance feedback; `matching` absent:
     * the semantic side is not held to the query's operators.
     */
    @Inject(LEXICAL_INDEX)
    lexical: Pick<LexicalIndex, 'search'> &
      Partial<Pick<LexicalIndex, 'termVectors' | 'matching' | 'texts'>>,
    @Inject(INDEX_STATE) private readonly spaces: IndexSpaceReader,
    @Inject(SEARCH_TUNING) tuning: SearchTuning,
  ) {
    this.oneSpace = new SpaceSearch(embedder, vectors, lexical, tuning, this.logger);
  }

  /** The index spaces to search: one per pipeline among the knowledge bases asked for. */
  async spacesFor(tenantId: TenantId, knowledgeBaseIds: string[]): Promise<SpaceToSearch[]> {
    try {
      const spaces = await timedStage('spaces', () =>
        this.spaces.knowledgeBaseSpaces(tenantId, knowledgeBaseIds),
      );
      this.rememberModels(tenantId, knowledgeBaseIds, spaces);
      return spaces;
    } catch (error) {
      // Without the index state, the tenant's own space.
      this.logger.warn(`index spaces unavailable, searching the tenant's own: ${String(error)}`);
      return [{ space: tenantSpace(tenantId), model: undefined }];
    }
  }

  /**
   * The cache key of the embedding `embedEarly` would make (the main model's), for the result
   * cache to read in its own round trip; undefined when the search embeds nothing.
   */
  earlyEmbeddingKey(request: SearchRequest): string | undefined {
    return request.mode === 'lexical'
      ? undefined
      : this.embedder.cacheKey(request.query, undefined);
  }

  /**
   * The query's embedding by the main model, started before the index spaces are read
   * (docs/adr/0029): when no other model is served, or when the same knowledge bases of the tenant
   * were last found all embedded by the main model (a knowledge base's model is fixed at its
   * creation, so the guess is nearly always right; when wrong, the run is wasted, not used).
   * Undefined otherwise, or when the search embeds nothing (`lexical`). A failure surfaces where
   * `retrieve` awaits it. `prefetched`: the embedding's cache entry, read with the search's
   * (`earlyEmbeddingKey`).
   */
  embedEarly(
    tenantId: TenantId,
    request: SearchRequest,
    prefetched?: PrefetchedEmbedding,
  ): Promise<number[]> | undefined {
    if (request.mode === 'lexical') return undefined;
    if (
      !this.embedder.mainIsOnly(undefined) &&
      this.mainModelOnly.get(modelsKey(tenantId, request.knowledgeBaseIds)) !== true
    ) {
      return undefined;
    }
    const embedding = this.embedder.embed(request.query, undefined, prefetched);
    embedding.catch(() => undefined); // awaited (and reported) by searchSpace
    return embedding;
  }

  /**
   * Each space searched and fused on its own, with its own model, `depth` candidates a side.
   * `embedded`: the main model's embedding of the query, already under way (`embedEarly`).
   */
  async retrieve(
    spaces: SpaceToSearch[],
    request: SearchRequest,
    scope: SearchScope,
    depth: number,
    embedded?: Promise<number[]>,
    budget?: SearchBudget,
    onFirstFusion?: FirstFusionListener,
  ): Promise<Retrieved> {
    // Inactive documents stay indexed but are never found (docs/adr/0025).
    const active = { ...scope, filter: activeOnly(scope.filter) };
    const outcomes = await Promise.all(
      spaces.map(({ space, model }) =>
        this.oneSpace.search(
          space,
          model,
          request,
          active,
          depth,
          embedded && this.embedder.usesMain(model) ? embedded : undefined,
          budget,
          onFirstFusion,
        ),
      ),
    );
    const failures = [...new Set(outcomes.flatMap((o) => o.failures))];
    if (outcomes.every((o) => o.hits === undefined)) {
      // Nothing finished in time: 504 / DEADLINE_EXCEEDED rather than 503 (docs/adr/0042).
      if (budget && failures.some((f) => f.endsWith('_timed_out'))) throw deadlineExceeded(budget);
      throw new SearchError(
        SearchErrorCode.Unavailable,
        `${request.mode} search is unavailable (${failures.join(', ')})`,
      );
    }
    return {
      bySpace: outcomes.map((o, i) => ({ space: spaces[i]!.space, hits: o.hits ?? [] })),
      degradedReason: failures[0],
      saturated: outcomes.some((o) => o.saturated),
    };
  }

  /** Whether the spaces just read for these knowledge bases all use the main model. */
  private rememberModels(tenantId: TenantId, knowledgeBaseIds: string[], spaces: SpaceToSearch[]) {
    this.mainModelOnly.set(
      modelsKey(tenantId, knowledgeBaseIds),
      spaces.every(({ model }) => this.embedder.usesMain(model)),
    );
  }
}
