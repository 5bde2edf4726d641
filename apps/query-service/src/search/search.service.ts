import type { Caller } from '@kb/auth';
import { type TenantId, tenantSpace } from '@kb/contracts';
import { raceAbort } from '@kb/database';
import {
  KnowledgeBaseLabelValue,
  meter,
  timedStage,
  withKnowledgeBase,
  withSpan,
} from '@kb/observability';
import { Inject, Injectable, Optional } from '@nestjs/common';

import { SEARCH_TUNING } from '../platform/tokens';
import { HybridRetrieval } from './hybrid.retrieval';
import type { PrefetchedEmbedding } from './query.embedder';
import { classifyQuery } from './query-type.classifier';
import { deadlineExceeded, SearchBudget } from './search.budget';
import { SearchError } from './search.errors';
import {
  chunkKey,
  MAX_RESULT_WINDOW,
  type SearchHit,
  type SearchRequest,
  type SearchResponse,
  type SearchTuning,
} from './search.model';
import { SearchQuota } from './search-quota';
import { SearchResultCache } from './search-result.cache';
import { DiversifyStep } from './steps/diversify.step';
import { HitDetailsStep } from './steps/hit-details.step';
import { NeighborsStep } from './steps/neighbors.step';
import { RerankStep } from './steps/rerank.step';
import { describeOutcome } from './steps/step.model';

/**
 * Candidates each strategy contributes before fusion, whatever top-k: score normalization and rank
 * fusion both need lists deep enough to overlap (docs/adr/0005).
 */
const HYBRID_CANDIDATES = 100;
/** Candidates MMR chooses among, at least; it re-orders, so it needs more than it returns. */
const MMR_CANDIDATES = 50;
/**
 * Pages that reach this far are prefetched: the first fusion's best `offset + topK` documents read
 * while RM3 runs (`DocumentsPrefetch`); a deeper page's documents are read once it is cut.
 */
const PREFETCHED_WINDOW = 50;
// Both carry `knowledge_base`: the one searched, `_multiple` for several, `_all` for none named
// (the whole tenant); ADR 41.
const searches = meter().createCounter('kb_search_requests_total', {
  description: 'Searches by mode, cache outcome, whether they were degraded, and knowledge base',
});
const searchDuration = meter().createHistogram('kb_search_duration_ms', {
  description: 'Search latency inside the service, by mode, cache outcome and knowledge base',
  unit: 'ms',
});
const searchResults = meter().createHistogram('kb_search_results', {
  description: 'Hits returned per search',
});

/** How far the strategies agree: the top hit found by both, some hit found by both, or none. */
export function confidenceOf(hits: SearchHit[]): SearchResponse['confidence'] {
  const both = (hit: SearchHit | undefined): boolean => (hit?.strategies.length ?? 0) > 1;
  if (both(hits[0])) return 'high';
  return hits.some(both) ? 'medium' : 'low';
}

/**
 * One version per document: while a new version is being swapped in, an index can briefly hold
 * both (each version is written whole, in one statement, before the old one is removed), so hits
 * of older versions of a document that also has newer hits are dropped.
 */
export function latestVersionsOnly<T extends { documentId: string; documentVersion: number }>(
  hits: T[],
): T[] {
  const latest = new Map<string, number>();
  for (const hit of hits) {
    latest.set(hit.documentId, Math.max(latest.get(hit.documentId) ?? 0, hit.documentVersion));
  }
  return hits.filter((hit) => hit.documentVersion === latest.get(hit.documentId));
}

/**
 * Hits of several index spaces, each list fused on its own (scores in [0, 1] for the convex
 * combination), merged by score. A passage two chunkings both found at the same offsets of the
 * same document version comes back once.
 */
export function mergeSpaces(lists: SearchHit[][]): SearchHit[] {
  const seen = new Set<string>();
  return lists
    .flat()
    .sort((a, b) => b.score - a.score)
    .filter((hit) => {
      const passage = `${hit.documentId}#${hit.documentVersion}#${hit.startOffset}-${hit.endOffset}`;
      if (seen.has(passage)) return false;
      seen.add(passage);
      return true;
    });
}

/** How many candidates to retrieve: the page asked for, or more when fusion or MMR need them. */
function depthOf(request: SearchRequest): number {
  return Math.max(
    request.offset + request.topK,
    request.mode === 'hybrid' || request.mode === 'auto' ? HYBRID_CANDIDATES : 0,
    request.mmr ? MMR_CANDIDATES : 0,
  );
}

/** `SEARCH_TIMEOUT_MS`'s default, for a service built without the deployment's tuning (tests). */
const DEFAULT_TIMEOUT_MS = 5000;

const elapsed = (started: number): number => Math.round((performance.now() - started) * 100) / 100;

/**
 * Search over a tenant's chunks; REST and gRPC both call this. Each step is its own class:
 * the result cache, hybrid retrieval (with the query embedder), rerank, MMR and neighbours.
 */
@Injectable()
export class SearchService {
  constructor(
    private readonly results: SearchResultCache,
    private readonly retrieval: HybridRetrieval,
    private readonly reranker: RerankStep,
    private readonly diversifier: DiversifyStep,
    private readonly neighbors: NeighborsStep,
    private readonly details: HitDetailsStep,
    @Optional() @Inject(SEARCH_TUNING) private readonly tuning?: SearchTuning,
    @Optional() private readonly quota?: SearchQuota,
  ) {}

  /**
   * `principals` undefined: no ACL filter (a tenant admin, or a trusted internal caller).
   * `caller`: whose token reads the hits' documents from document-service; without one, hits
   * carry their locations only.
   */
  async search(
    tenantId: TenantId,
    request: SearchRequest,
    principals?: string[],
    caller?: Caller,
  ): Promise<SearchResponse> {
    // Before any work: a search past the day's quota is refused (docs/adr/0053).
    await this.quota?.admit(tenantId, request.knowledgeBaseIds ?? [], caller);
    const response = await withSpan(
      'kb.search',
      { 'kb.tenant_id': tenantId, 'kb.mode': request.mode, 'kb.top_k': request.topK },
      async () => {
        const started = performance.now();
        const answer = await this.results.getOrCompute(
          tenantId,
          principals,
          request,
          (prefetched) =>
            this.withinBudget(tenantId, request, principals, caller, started, prefetched),
          this.retrieval.earlyEmbeddingKey(request),
        );
        // A cached answer carries the time of the search that computed it.
        return answer.cache === 'hit' ? { ...answer, tookMs: elapsed(started) } : answer;
      },
    );
    const labels = withKnowledgeBase(
      { mode: response.mode, cache: response.cache, degraded: String(response.degraded) },
      request.knowledgeBaseIds,
      KnowledgeBaseLabelValue.all,
    );
    searches.add(1, labels);
    searchDuration.record(response.tookMs, labels);
    searchResults.record(response.hits.length, { mode: response.mode });
    return response;
  }

  /**
   * A miss, bounded by its budget (docs/adr/0042): past the deadline the answer is 504 /
   * DEADLINE_EXCEEDED, whatever is still running; the strategies were told to stop before it.
   * A cache hit takes no budget: its timers cost the hit path a tenth of its throughput.
   */
  private withinBudget(
    tenantId: TenantId,
    request: SearchRequest,
    principals: string[] | undefined,
    caller: Caller | undefined,
    started: number,
    prefetched?: PrefetchedEmbedding,
  ): Promise<SearchResponse> {
    const budget = new SearchBudget(
      request.timeoutMs ?? this.tuning?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
    return raceAbort(
      this.execute(tenantId, request, principals, caller, started, budget, prefetched),
      budget.signal,
    ).catch((error: unknown) => {
      if (!budget.signal.aborted || error instanceof SearchError) throw error;
      throw deadlineExceeded(budget);
    });
  }

  /** spaces → retrieve → merge → latest version → rerank → MMR → page → neighbours → details. */
  private async execute(
    tenantId: TenantId,
    request: SearchRequest,
    principals: string[] | undefined,
    caller: Caller | undefined,
    started: number,
    budget: SearchBudget,
    prefetched?: PrefetchedEmbedding,
  ): Promise<SearchResponse> {
    const depth = depthOf(request);
    const scope = {
      filter: request.filter,
      knowledgeBaseIds: request.knowledgeBaseIds,
      principals,
      // Both strategies' queries stop here: a statement past it is cancelled (docs/adr/0042).
      signal: budget.retrieval,
    };
    // The query embedding starts now, while the index spaces are read (docs/adr/0029).
    const embedded = this.retrieval.embedEarly(tenantId, request, prefetched);
    // One index space per pipeline (chunker, model) among the knowledge bases searched; nearly
    // always one. Each is searched and fused on its own, with its own model (docs/adr/0012).
    const spaces = await this.retrieval.spacesFor(tenantId, request.knowledgeBaseIds);
    // The page's likely documents are read while RM3's second pass runs (DocumentsPrefetch).
    const window = request.offset + request.topK;
    const prefetch =
      caller && window <= PREFETCHED_WINDOW ? this.details.prefetch(caller) : undefined;
    const { bySpace, degradedReason, saturated } = await this.retrieval.retrieve(
      spaces,
      request,
      scope,
      depth,
      embedded,
      budget,
      prefetch && ((documentIds) => prefetch.add(documentIds)),
    );
    const merged =
      bySpace.length === 1 ? bySpace[0]!.hits : mergeSpaces(bySpace.map((s) => s.hits));
    const latest = latestVersionsOnly(merged);
    const reranked = await timedStage('rerank', () => this.reranker.run(latest, request, budget));
    const diversified = await timedStage('mmr', () =>
      this.diversifier.run(
        reranked.hits,
        spaces.map((s) => s.space),
        request,
        depth,
      ),
    );
    const page = diversified.hits.slice(request.offset, window);
    const hasMore = diversified.hits.length > window && window < MAX_RESULT_WINDOW;
    const spaceOf = new Map(
      bySpace.flatMap(({ space, hits }) => hits.map((hit) => [chunkKey(hit), space] as const)),
    );
    const spaceOfHit = (hit: SearchHit) => spaceOf.get(chunkKey(hit)) ?? tenantSpace(tenantId);
    const withNeighbors = await timedStage('neighbors', () =>
      this.neighbors.run(page, request.neighbors, spaceOfHit),
    );
    // A neighbour lives in the space of the hit it was read around: same document version.
    const versionKey = (hit: SearchHit) => `${hit.documentId}#${hit.documentVersion}`;
    const spaceOfVersion = new Map(page.map((hit) => [versionKey(hit), spaceOfHit(hit)]));
    const described = await timedStage('details', () =>
      this.details.run(
        withNeighbors.hits,
        (hit) => spaceOfVersion.get(versionKey(hit)) ?? spaceOfHit(hit),
        caller,
        prefetch,
      ),
    );
    return {
      hits: described.hits,
      tookMs: elapsed(started),
      cache: 'off',
      mode: request.mode,
      queryType: classifyQuery(request.query),
      confidence: confidenceOf(page),
      rerank: describeOutcome(reranked.outcome),
      mmr: describeOutcome(diversified.outcome),
      details: describeOutcome(described.outcome),
      // Hits of documents deleted since they were indexed left the page (HitDetailsStep).
      total:
        diversified.hits.length - page.filter((hit) => described.gone.has(hit.documentId)).length,
      totalRelation: saturated ? 'gte' : 'eq',
      ...(hasMore ? { nextOffset: window } : {}),
      degraded: degradedReason !== undefined,
      ...(degradedReason ? { degradedReason } : {}),
    };
  }
}
