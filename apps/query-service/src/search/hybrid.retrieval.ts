import { activeOnly, type IndexSpace, type TenantId, tenantSpace } from '@kb/contracts';
import type { DocumentIndexState, KnowledgeBaseSpace } from '@kb/index-state';
import { type LexicalIndex, type LexicalQuery, parseLexicalQuery } from '@kb/lexical-index';
import { timedStage, withSpan } from '@kb/observability';
import type { VectorQuery, VectorStore } from '@kb/vector-store';
import { Inject, Injectable, Logger } from '@nestjs/common';

import { INDEX_STATE, LEXICAL_INDEX, SEARCH_TUNING, VECTOR_STORE } from '../platform/tokens';
import { type Candidate, hitOf, withTextsOf } from './candidates';
import { type FeedbackHit, RM3, rm3Expansion } from './feedback';
import {
  ADAPTIVE_PRIOR,
  adaptiveCombination,
  convexCombination,
  type Ranked,
  reciprocalRankFusion,
} from './fusion.ranking';
import { type PrefetchedEmbedding, QueryEmbedder } from './query.embedder';
import { classifyQuery, semanticWeightFor } from './query-type.classifier';
import { SearchError, SearchErrorCode } from './search.errors';
import {
  chunkKey,
  type DegradedReason,
  type SearchHit,
  type SearchRequest,
  type SearchTuning,
} from './search.model';

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
 * What a client sees of a lexical score when BM25 answers alone (`mode: lexical`, or hybrid with
 * vector search down): rounded to two decimals. The statistics behind it already count only the
 * chunks the caller may read; rounding keeps the last digits from serving as a precise probe of
 * them all the same, and says the number is a rank, not raw BM25 (docs/adr/0019).
 */
export const exposedLexicalScore = (score: number): number => Math.round(score * 100) / 100;

/**
 * Hybrid retrieval over the index spaces of a search: in each space, vector and BM25 search run
 * in parallel and are fused (adaptive convex combination by default, or fixed α, or RRF). When one side fails, the
 * other's results come back marked degraded; when every side of every space fails, 503.
 */
@Injectable()
export class HybridRetrieval {
  private readonly logger = new Logger(HybridRetrieval.name);
  /**
   * Per tenant and knowledge-base selection, whether its spaces were all embedded by the main
   * model when last read (`embedEarly`'s guess), the most recently read last.
   */
  private readonly mainModelOnly = new Map<string, boolean>();

  constructor(
    private readonly embedder: QueryEmbedder,
    @Inject(VECTOR_STORE) private readonly vectors: Pick<VectorStore, 'query'>,
    /**
     * `texts` absent (some test doubles): the vector store sends the semantic candidates' texts;
     * `termVectors` absent: no pseudo-relevance feedback; `matching` absent:
     * the semantic side is not held to the query's operators.
     */
    @Inject(LEXICAL_INDEX)
    private readonly lexical: Pick<LexicalIndex, 'search'> &
      Partial<Pick<LexicalIndex, 'termVectors' | 'matching' | 'texts'>>,
    @Inject(INDEX_STATE) private readonly spaces: IndexSpaceReader,
    @Inject(SEARCH_TUNING) private readonly tuning: SearchTuning,
  ) {}

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
  ): Promise<Retrieved> {
    // Inactive documents stay indexed but are never found (docs/adr/0025).
    const active = { ...scope, filter: activeOnly(scope.filter) };
    const outcomes = await Promise.all(
      spaces.map(({ space, model }) =>
        this.searchSpace(
          space,
          model,
          request,
          active,
          depth,
          embedded && this.embedder.usesMain(model) ? embedded : undefined,
        ),
      ),
    );
    const failures = [...new Set(outcomes.flatMap((o) => o.failures))];
    if (outcomes.every((o) => o.hits === undefined)) {
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
    const key = modelsKey(tenantId, knowledgeBaseIds);
    this.mainModelOnly.delete(key);
    this.mainModelOnly.set(
      key,
      spaces.every(({ model }) => this.embedder.usesMain(model)),
    );
    if (this.mainModelOnly.size > REMEMBERED_SELECTIONS) {
      this.mainModelOnly.delete(this.mainModelOnly.keys().next().value as string);
    }
  }

  /**
   * α of the fixed convex rule (the deployment's), or the prior α₀ of the adaptive rule
   * (ADAPTIVE_PRIOR); under `auto`, either moved by the query type.
   */
  private semanticWeightOf(request: SearchRequest, base: number): number {
    return request.mode === 'auto' ? semanticWeightFor(classifyQuery(request.query), base) : base;
  }

  /** Both lists fused by the request's rule (adaptive unless it asks for another). */
  private fuse(lists: Ranked<Candidate>[], request: SearchRequest) {
    switch (request.fusion) {
      case 'rrf':
        return reciprocalRankFusion(lists, chunkKey);
      case 'convex':
        return convexCombination(
          lists,
          chunkKey,
          this.semanticWeightOf(request, this.tuning.semanticWeight),
        );
      case 'adaptive':
        return adaptiveCombination(lists, chunkKey, this.semanticWeightOf(request, ADAPTIVE_PRIOR));
    }
  }

  /**
   * Pseudo-relevance feedback (RM3, docs/adr/0028): the lexical side searched again with the
   * query expanded from the terms of the best hits of the first fusion, so the lists can be fused
   * again. Off (`PSEUDO_RELEVANCE_FEEDBACK=none`), or when the second search fails, the first
   * pass's lists are kept.
   */
  private async withFeedback(
    space: IndexSpace,
    request: SearchRequest,
    scope: SearchScope,
    depth: number,
    lists: Ranked<Candidate>[],
  ): Promise<Ranked<Candidate>[]> {
    if (!this.feedbackOn()) return lists;
    try {
      const best = this.fuse(lists, request).slice(0, RM3.documents);
      const vectors = await this.lexical.termVectors!(
        space,
        best.map(({ item }) => item),
      );
      const hits: FeedbackHit[] = best.flatMap(({ item, score }) => {
        const terms = vectors.get(`${item.documentId}#${item.documentVersion}#${item.chunkIndex}`);
        return terms ? [{ score, terms }] : [];
      });
      const expansion = rm3Expansion(hits);
      if (!expansion) return lists;
      const lexical = await this.bm25(space, {
        text: request.query,
        topK: depth,
        ...scope,
        expansion,
      });
      return lists.map((list) =>
        list.strategy === 'lexical' ? { strategy: 'lexical', items: lexical } : list,
      );
    } catch (error) {
      this.logger.warn(`pseudo-relevance feedback failed, first pass kept: ${String(error)}`);
      return lists;
    }
  }

  /**
   * One BM25 search, as a span of its own: the lexical index says on it whether the search ran
   * in memory or in Postgres (`kb.lexical`, docs/adr/0029).
   */
  private bm25(space: IndexSpace, query: LexicalQuery) {
    return withSpan('kb.bm25', { 'kb.index_space': space }, () =>
      this.lexical.search(space, query),
    );
  }

  private feedbackOn(): boolean {
    return (this.tuning.feedback ?? 'rm3') === 'rm3' && this.lexical.termVectors !== undefined;
  }

  /** `withTextsOf` over the lexical index (docs/adr/0029, twelfth pass). */
  private async withChunkTexts(
    space: IndexSpace,
    found: Candidate[],
    again: () => Promise<Candidate[]>,
  ): Promise<Candidate[]> {
    try {
      return await withTextsOf(found, (missing) =>
        timedStage('texts', () => this.lexical.texts!(space, missing)),
      );
    } catch (error) {
      this.logger.warn(`chunk texts unreadable from the lexical index: ${String(error)}`);
      return again();
    }
  }

  /**
   * The lists with texts: a first BM25 pass read without its texts (`withText: false`) that
   * feedback did not replace (the vector side failed, feedback failed or added nothing) is read
   * again with them; if that fails, the answer goes on without the lexical side.
   */
  private async withTexts(
    space: IndexSpace,
    request: SearchRequest,
    scope: SearchScope,
    depth: number,
    lists: Ranked<Candidate>[],
    textless: Candidate[],
    failures: DegradedReason[],
  ): Promise<Ranked<Candidate>[]> {
    const kept = lists.findIndex((list) => list.items === textless);
    if (kept < 0) return lists;
    try {
      const items = await this.bm25(space, {
        text: request.query,
        topK: depth,
        ...scope,
      });
      return lists.map((list, i) => (i === kept ? { strategy: 'lexical', items } : list));
    } catch (error) {
      this.logger.warn(`lexical search failed: ${String(error)}`);
      failures.push('lexical_search_unavailable');
      return lists.filter((_, i) => i !== kept);
    }
  }

  /**
   * The semantic candidates that satisfy the syntax typed in the query (phrases, operators,
   * exclusions), as the lexical side's do: `kubernetes -helm` finds no chunk that mentions helm
   * on either side (docs/adr/0028). Identifiers among plain words are a lexical preference, not a
   * requirement; plain words constrain nothing, and cost no lookup. If the check fails, the candidates are
   * kept and the answer says the lexical side is unavailable.
   */
  private async meetingOperators(
    space: IndexSpace,
    query: string,
    candidates: Candidate[],
    failures: DegradedReason[],
  ): Promise<Candidate[]> {
    if (!this.lexical.matching || candidates.length === 0) return candidates;
    if (parseLexicalQuery(query).constraint === null) return candidates;
    try {
      const matching = await timedStage('operators', () =>
        this.lexical.matching!(space, query, candidates),
      );
      return candidates.filter((candidate) => matching.has(chunkKey(candidate)));
    } catch (error) {
      this.logger.warn(`operator check of vector hits failed, kept unchecked: ${String(error)}`);
      failures.push('lexical_search_unavailable');
      return candidates;
    }
  }

  /**
   * Vector and BM25 search of one index space in parallel, fused. `hits` is undefined when both
   * sides failed; `failures` says which did.
   */
  private async searchSpace(
    space: IndexSpace,
    model: string | undefined,
    request: SearchRequest,
    scope: SearchScope,
    depth: number,
    embedded: Promise<number[]> | undefined,
  ): Promise<{ hits: SearchHit[] | undefined; failures: DegradedReason[]; saturated: boolean }> {
    // With feedback to come, the first BM25 pass only ranks (its list is replaced by the second
    // pass's): its texts are not read unless that list is kept after all (docs/adr/0029).
    const textless = request.mode !== 'semantic' && request.mode !== 'lexical' && this.feedbackOn();
    // With both sides searched, the semantic candidates' texts come from the lexical index, whose
    // cache holds them in memory once read, not from the vector store (docs/adr/0029).
    const textsFromLexical =
      request.mode !== 'semantic' && request.mode !== 'lexical' && this.lexical.texts !== undefined;
    const [semantic, lexical] = await Promise.allSettled([
      request.mode === 'lexical'
        ? Promise.resolve(null)
        : (embedded ?? this.embedder.embed(request.query, model)).then(async (vector) => {
            const query = { vector, topK: depth, ...scope };
            if (!textsFromLexical) {
              return timedStage('vector', () => this.vectors.query(space, query));
            }
            const found = await timedStage('vector', () =>
              this.vectors.query(space, { ...query, withText: false }),
            );
            return this.withChunkTexts(space, found, () => this.vectors.query(space, query));
          }),
      request.mode === 'semantic'
        ? Promise.resolve(null)
        : timedStage('lexical', () =>
            this.bm25(space, {
              text: request.query,
              topK: depth,
              ...scope,
              ...(textless ? { withText: false } : {}),
            }),
          ),
    ]);
    const lists: Ranked<Candidate>[] = [];
    const failures: DegradedReason[] = [];
    if (semantic.status === 'rejected') {
      this.logger.warn(`vector search failed: ${String(semantic.reason)}`);
      failures.push('vector_search_unavailable');
    } else if (semantic.value) {
      const items =
        request.mode === 'semantic'
          ? semantic.value
          : await this.meetingOperators(space, request.query, semantic.value, failures);
      lists.push({ strategy: 'semantic', items });
    }
    if (lexical.status === 'rejected') {
      this.logger.warn(`lexical search failed: ${String(lexical.reason)}`);
      failures.push('lexical_search_unavailable');
    } else if (lexical.value) {
      lists.push({ strategy: 'lexical', items: lexical.value });
    }
    if (lists.length === 0) return { hits: undefined, failures, saturated: false };
    const saturated = lists.some((list) => list.items.length >= depth);
    const ranked =
      lists.length === 2
        ? await timedStage('feedback', () => this.withFeedback(space, request, scope, depth, lists))
        : lists;
    const fused =
      textless && lexical.status === 'fulfilled' && lexical.value
        ? await this.withTexts(space, request, scope, depth, ranked, lexical.value, failures)
        : ranked;
    if (fused.length === 0) return { hits: undefined, failures, saturated: false };
    const hits: SearchHit[] = (
      fused.length === 1
        ? fused[0]!.items.map((item) =>
            hitOf(
              item,
              fused[0]!.strategy === 'lexical' ? exposedLexicalScore(item.score) : item.score,
              [fused[0]!.strategy],
            ),
          )
        : this.fuse(fused, request).map(({ item, score, strategies }) =>
            hitOf(item, score, strategies),
          )
    ).filter((hit) => hit.score >= request.minScore);
    return { hits, failures, saturated };
  }
}
