import type { IndexSpace } from '@kb/contracts';
import { raceAbort } from '@kb/database';
import {
  type LexicalIndex,
  type LexicalPassMemo,
  type LexicalQuery,
  parseLexicalQuery,
} from '@kb/lexical-index';
import { timedStage, withSpan } from '@kb/observability';
import type { VectorStore } from '@kb/vector-store';
import type { Logger } from '@nestjs/common';

import {
  type Candidate,
  exposedLexicalScore,
  type FirstFusionListener,
  hitOf,
  withTextsOf,
} from './candidates';
import { type FeedbackHit, RM3, rm3Expansion } from './feedback';
import {
  ADAPTIVE_PRIOR,
  adaptiveCombination,
  convexCombination,
  type Ranked,
  reciprocalRankFusion,
} from './fusion.ranking';
import type { SearchScope } from './hybrid.retrieval';
import type { QueryEmbedder } from './query.embedder';
import { classifyQuery, semanticWeightFor } from './query-type.classifier';
import type { SearchBudget } from './search.budget';
import {
  chunkKey,
  type DegradedReason,
  type SearchHit,
  type SearchRequest,
  type SearchTuning,
} from './search.model';

/**
 * What RM3 feedback costs at most, about (its p95 on CISI, docs/adr/0042): with less of the budget
 * left before the reserve, it is skipped (`feedback_skipped` in the stage timings) and the first
 * pass is fused.
 */
const FEEDBACK_COST_MS = 50;

/** Why a strategy failed: its time ran out (the retrieval signal aborted), or it was unavailable. */
function reasonOf(strategy: 'vector' | 'lexical', scope: SearchScope): DegradedReason {
  return scope.signal?.aborted ? `${strategy}_search_timed_out` : `${strategy}_search_unavailable`;
}

/**
 * The search of one index space: vector and BM25 search in parallel, the semantic side held to
 * the query's operators, pseudo-relevance feedback, chunk texts, then fusion.
 */
export class SpaceSearch {
  constructor(
    private readonly embedder: QueryEmbedder,
    private readonly vectors: Pick<VectorStore, 'query'>,
    /**
     * `texts` absent (some test doubles): the vector store sends the semantic candidates' texts;
     * `termVectors` absent: no pseudo-relevance feedback; `matching` absent:
     * the semantic side is not held to the query's operators.
     */
    private readonly lexical: Pick<LexicalIndex, 'search'> &
      Partial<Pick<LexicalIndex, 'termVectors' | 'matching' | 'texts'>>,
    private readonly tuning: SearchTuning,
    private readonly logger: Logger,
  ) {}

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
    budget: SearchBudget | undefined,
    passMemo: LexicalPassMemo,
    onFirstFusion: FirstFusionListener | undefined,
  ): Promise<Ranked<Candidate>[]> {
    if (!this.feedbackOn()) return lists;
    if (budget?.cannotAfford(FEEDBACK_COST_MS)) {
      await timedStage('feedback_skipped', () => Promise.resolve());
      return lists;
    }
    try {
      const first = this.fuse(lists, request);
      onFirstFusion?.(first.slice(0, request.offset + request.topK).map((c) => c.item.documentId));
      const best = first.slice(0, RM3.documents);
      // Its two parts are stages of their own, inside `feedback` (docs/performance.md).
      const vectors = await timedStage('feedback_terms', () =>
        raceAbort(
          this.lexical.termVectors!(
            space,
            best.map(({ item }) => item),
          ),
          scope.signal,
        ),
      );
      const hits: FeedbackHit[] = best.flatMap(({ item, score }) => {
        const terms = vectors.get(`${item.documentId}#${item.documentVersion}#${item.chunkIndex}`);
        return terms ? [{ score, terms }] : [];
      });
      const expansion = rm3Expansion(hits);
      if (!expansion) return lists;
      const lexical = await timedStage('feedback_lexical', () =>
        this.bm25(space, {
          text: request.query,
          topK: depth,
          ...scope,
          expansion,
          passMemo,
        }),
      );
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
    budget: SearchBudget | undefined,
  ): Promise<Ranked<Candidate>[]> {
    const kept = lists.findIndex((list) => list.items === textless);
    if (kept < 0) return lists;
    try {
      // The first pass again, with its texts: only the deadline bounds it (docs/adr/0042).
      const items = await this.bm25(space, {
        text: request.query,
        topK: depth,
        ...scope,
        signal: budget?.signal ?? scope.signal,
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
   * requirement; plain words constrain nothing, and cost no lookup. If the check fails, the
   * candidates are kept and the answer says the lexical side is unavailable.
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
  async search(
    space: IndexSpace,
    model: string | undefined,
    request: SearchRequest,
    scope: SearchScope,
    depth: number,
    embedded: Promise<number[]> | undefined,
    budget?: SearchBudget,
    onFirstFusion?: FirstFusionListener,
  ): Promise<{ hits: SearchHit[] | undefined; failures: DegradedReason[]; saturated: boolean }> {
    // With feedback to come, the first BM25 pass only ranks (its list is replaced by the second
    // pass's): its texts are not read unless that list is kept after all (docs/adr/0029).
    const textless = request.mode !== 'semantic' && request.mode !== 'lexical' && this.feedbackOn();
    // With both sides searched, the semantic candidates' texts come from the lexical index, whose
    // cache holds them in memory once read, not from the vector store (docs/adr/0029).
    const textsFromLexical =
      request.mode !== 'semantic' && request.mode !== 'lexical' && this.lexical.texts !== undefined;
    // The first pass's scores, which RM3's second pass starts from (docs/adr/0058).
    const passMemo: LexicalPassMemo = {};
    const [semantic, lexical] = await Promise.allSettled([
      request.mode === 'lexical'
        ? Promise.resolve(null)
        : // The model's run is not stopped (its vector is cached for the next search); the
          // search stops waiting for it at the budget (docs/adr/0042).
          raceAbort(embedded ?? this.embedder.embed(request.query, model), scope.signal).then(
            async (vector) => {
              const query = { vector, topK: depth, ...scope };
              if (!textsFromLexical) {
                return timedStage('vector', () => this.vectors.query(space, query));
              }
              const found = await timedStage('vector', () =>
                this.vectors.query(space, { ...query, withText: false }),
              );
              return this.withChunkTexts(space, found, () => this.vectors.query(space, query));
            },
          ),
      request.mode === 'semantic'
        ? Promise.resolve(null)
        : timedStage('lexical', () =>
            this.bm25(space, {
              text: request.query,
              topK: depth,
              ...scope,
              ...(textless ? { withText: false, passMemo } : {}),
            }),
          ),
    ]);
    const lists: Ranked<Candidate>[] = [];
    const failures: DegradedReason[] = [];
    if (semantic.status === 'rejected') {
      this.logger.warn(`vector search failed: ${String(semantic.reason)}`);
      failures.push(reasonOf('vector', scope));
    } else if (semantic.value) {
      const items =
        request.mode === 'semantic'
          ? semantic.value
          : await this.meetingOperators(space, request.query, semantic.value, failures);
      lists.push({ strategy: 'semantic', items });
    }
    if (lexical.status === 'rejected') {
      this.logger.warn(`lexical search failed: ${String(lexical.reason)}`);
      failures.push(reasonOf('lexical', scope));
    } else if (lexical.value) {
      lists.push({ strategy: 'lexical', items: lexical.value });
    }
    if (lists.length === 0) return { hits: undefined, failures, saturated: false };
    const saturated = lists.some((list) => list.items.length >= depth);
    const ranked =
      lists.length === 2
        ? await timedStage('feedback', () =>
            this.withFeedback(space, request, scope, depth, lists, budget, passMemo, onFirstFusion),
          )
        : lists;
    const fused =
      textless && lexical.status === 'fulfilled' && lexical.value
        ? await this.withTexts(
            space,
            request,
            scope,
            depth,
            ranked,
            lexical.value,
            failures,
            budget,
          )
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
