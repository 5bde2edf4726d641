import { tenantSpace, type IndexSpace, type TenantId } from '@kb/contracts';
import type { EmbeddingProvider } from '@kb/embeddings';
import type { DocumentIndexState, IndexGenerations } from '@kb/index-state';
import type { LexicalIndex } from '@kb/lexical-index';
import { annotateActiveSpan, meter, withSpan } from '@kb/observability';
import type { VectorQuery, VectorStore } from '@kb/vector-store';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { searchCacheKey, type CachedSearch, type SearchCache } from '../cache/search-cache';
import {
  EMBEDDING_PROVIDER,
  GENERATIONS,
  INDEX_STATE,
  LEXICAL_INDEX,
  EXTRA_EMBEDDERS,
  RERANKER,
  SEARCH_CACHE,
  SEARCH_TUNING,
  VECTOR_STORE,
} from '../platform/tokens';
import { convexCombination, reciprocalRankFusion, type Ranked } from './fusion';
import { maximalMarginalRelevance } from './mmr';
import type { Reranker } from './reranker';
import { SearchError, SearchErrorCode } from './search.errors';
import {
  MAX_RESULT_WINDOW,
  normalizeRequest,
  type DegradedReason,
  type SearchHit,
  type SearchRequest,
  type SearchResponse,
} from './search.model';

type Candidate = Omit<SearchHit, 'score' | 'strategies' | 'isMatch'>;

/** Deployment-wide ranking settings (query-service config). */
export interface SearchTuning {
  /** α of the convex combination: α·semantic + (1 − α)·lexical. */
  semanticWeight: number;
  /** How many of the best fused candidates the cross-encoder re-scores. */
  rerankCandidates: number;
}

export const DEFAULT_SEARCH_TUNING: SearchTuning = { semanticWeight: 0.7, rerankCandidates: 30 };

/**
 * Candidates each strategy contributes before fusion, whatever top-k: score normalization and rank
 * fusion both need lists deep enough to overlap (docs/adr/0005).
 */
const HYBRID_CANDIDATES = 100;
/** Candidates MMR chooses among, at least; it re-orders, so it needs more than it returns. */
const MMR_CANDIDATES = 50;
const searches = meter().createCounter('kb_search_requests_total', {
  description: 'Searches by mode, cache outcome and whether they were degraded',
});
const searchDuration = meter().createHistogram('kb_search_duration_ms', {
  description: 'Search latency inside the service',
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

const elapsed = (started: number): number => Math.round((performance.now() - started) * 100) / 100;
const keyOf = (c: Candidate): string => `${c.documentId}#${c.documentVersion}#${c.chunkIndex}`;

/**
 * Search over a tenant's chunks; REST and gRPC both call this. Hybrid mode runs vector and
 * BM25 search in parallel and fuses them (convex combination by default, or RRF). When one side fails,
 * the other's results come back marked degraded; when both fail, 503.
 */
@Injectable()
export class SearchService {
  private readonly logger = new Logger(SearchService.name);

  constructor(
    @Inject(EMBEDDING_PROVIDER) private readonly embedder: EmbeddingProvider,
    @Inject(VECTOR_STORE) private readonly vectors: VectorStore,
    @Inject(LEXICAL_INDEX) private readonly lexical: LexicalIndex,
    @Inject(GENERATIONS) private readonly generations: Pick<IndexGenerations, 'current'>,
    @Inject(INDEX_STATE)
    private readonly indexState: Pick<DocumentIndexState, 'knowledgeBaseSpaces'>,
    @Inject(SEARCH_CACHE) private readonly cache: SearchCache | null,
    @Optional()
    @Inject(SEARCH_TUNING)
    private readonly tuning: SearchTuning = DEFAULT_SEARCH_TUNING,
    @Optional() @Inject(RERANKER) private readonly reranker: Reranker | null = null,
    /** Models served beside the default one (EMBEDDING_EXTRA_MODELS), by name. */
    @Optional()
    @Inject(EXTRA_EMBEDDERS)
    private readonly embedders: ReadonlyMap<string, EmbeddingProvider> | null = null,
  ) {}

  /** Answers from the result cache when it can (see `searchInSpan`). */
  async search(
    tenantId: TenantId,
    request: SearchRequest,
    principals?: string[],
  ): Promise<SearchResponse> {
    const response = await withSpan(
      'kb.search',
      { 'kb.tenant_id': tenantId, 'kb.mode': request.mode, 'kb.top_k': request.topK },
      () => this.searchInSpan(tenantId, request, principals),
    );
    const labels = {
      mode: response.mode,
      cache: response.cache,
      degraded: String(response.degraded),
    };
    searches.add(1, labels);
    searchDuration.record(response.tookMs, labels);
    searchResults.record(response.hits.length, { mode: response.mode });
    return response;
  }

  /**
   * `principals` undefined: no ACL filter (a tenant admin, or a trusted internal caller). The
   * tenant's index generation (Postgres) and the cached entry (Redis) are read at once; the entry
   * answers only when it was computed at the current generation, which indexing bumps after every
   * change, so a result is never served after its content changed.
   */
  private async searchInSpan(
    tenantId: TenantId,
    request: SearchRequest,
    principals: string[] | undefined,
  ): Promise<SearchResponse> {
    const started = performance.now();
    const key = this.cache
      ? searchCacheKey({
          tenantId,
          // Callers with the same principal set see the same documents, so they share entries.
          principals: principals ?? ['*unfiltered'],
          // The fusion weight ranks the results too: a changed setting must not serve old rankings.
          request: [normalizeRequest(request), this.tuning.semanticWeight],
        })
      : undefined;
    const [generation, cached] = key
      ? await Promise.all([this.generation(tenantId), this.cache!.get(key)])
      : [undefined, undefined];
    const entry = cached ? (JSON.parse(cached) as CachedSearch<SearchResponse>) : undefined;
    const usable = generation !== undefined;
    const hit = usable && entry?.generation === generation;
    annotateActiveSpan({ 'kb.cache': hit ? 'hit' : usable ? 'miss' : 'off' });
    if (hit) return { ...entry.response, cache: 'hit', tookMs: elapsed(started) };
    const response = await this.execute(tenantId, request, principals, started);
    if (key && usable && !response.degraded) {
      const fresh: CachedSearch<SearchResponse> = { generation, response };
      await this.cache!.set(key, JSON.stringify(fresh));
    }
    return { ...response, cache: usable ? 'miss' : 'off' };
  }

  /** The tenant's index generation; undefined (caching skipped) when it cannot be read. */
  private async generation(tenantId: TenantId): Promise<number | undefined> {
    try {
      return await this.generations.current(tenantId);
    } catch (error) {
      this.logger.warn(`index generation unavailable, cache skipped: ${String(error)}`);
      return undefined;
    }
  }

  private async execute(
    tenantId: TenantId,
    request: SearchRequest,
    principals: string[] | undefined,
    started: number,
  ): Promise<SearchResponse> {
    const window = request.offset + request.topK;
    const depth = Math.max(
      window,
      request.mode === 'hybrid' ? HYBRID_CANDIDATES : 0,
      request.mmr ? MMR_CANDIDATES : 0,
    );
    const scope = {
      filter: request.filter,
      knowledgeBaseIds: request.knowledgeBaseIds,
      principals,
    };
    // One index space per pipeline (chunker, model) among the knowledge bases searched; nearly
    // always one. Each is searched and fused on its own, with its own model (docs/adr/0012).
    const spaces = await this.spacesFor(tenantId, request.knowledgeBaseIds);
    const outcomes = await Promise.all(
      spaces.map(({ space, model }) => this.searchSpace(space, model, request, scope, depth)),
    );
    const failures = [...new Set(outcomes.flatMap((o) => o.failures))];
    if (outcomes.every((o) => o.hits === undefined)) {
      throw new SearchError(
        SearchErrorCode.Unavailable,
        `${request.mode} search is unavailable (${failures.join(', ')})`,
      );
    }
    const degradedReason = failures[0];
    const spaceOf = new Map<string, IndexSpace>();
    for (const [i, outcome] of outcomes.entries()) {
      for (const hit of outcome.hits ?? []) spaceOf.set(keyOf(hit), spaces[i]!.space);
    }
    const fused: SearchHit[] =
      outcomes.length === 1
        ? (outcomes[0]!.hits ?? [])
        : mergeSpaces(outcomes.map((o) => o.hits ?? []));
    let ranked = latestVersionsOnly(fused);
    let rerank: SearchResponse['rerank'] = 'off';
    if (request.rerank) {
      const reranked = await this.rerank(request.query, ranked);
      rerank = typeof reranked === 'string' ? reranked : 'applied';
      if (typeof reranked !== 'string') ranked = reranked;
    }
    let mmr: SearchResponse['mmr'] = 'off';
    if (request.mmr && spaces.length > 1) {
      // Vectors of different models cannot be compared with each other.
      mmr = 'skipped: several_vector_spaces';
    } else if (request.mmr) {
      const diversified = await this.diversify(spaces[0]!.space, ranked, request.mmrLambda, depth);
      ranked = diversified ?? ranked;
      mmr = diversified ? 'applied' : 'skipped: vector_search_unavailable';
    }
    const hits = ranked.slice(request.offset, window);
    const hasMore = ranked.length > window && window < MAX_RESULT_WINDOW;
    return {
      hits:
        request.neighbors > 0
          ? await this.withNeighbors(
              (hit) => spaceOf.get(keyOf(hit)) ?? tenantSpace(tenantId),
              hits,
              request.neighbors,
            )
          : hits,
      tookMs: elapsed(started),
      cache: 'off',
      mode: request.mode,
      confidence: confidenceOf(hits),
      rerank,
      mmr,
      ...(hasMore ? { nextOffset: window } : {}),
      degraded: degradedReason !== undefined,
      ...(degradedReason ? { degradedReason } : {}),
    };
  }

  /** The index spaces to search: one per pipeline among the knowledge bases asked for. */
  private async spacesFor(
    tenantId: TenantId,
    knowledgeBaseIds: string[],
  ): Promise<Array<{ space: IndexSpace; model: string | undefined }>> {
    try {
      return await this.indexState.knowledgeBaseSpaces(tenantId, knowledgeBaseIds);
    } catch (error) {
      // The bookkeeping is in the lexical index's database; without it, the tenant's own space.
      this.logger.warn(`index spaces unavailable, searching the tenant's own: ${String(error)}`);
      return [{ space: tenantSpace(tenantId), model: undefined }];
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
    scope: Omit<VectorQuery, 'vector' | 'topK'>,
    depth: number,
  ): Promise<{ hits: SearchHit[] | undefined; failures: DegradedReason[] }> {
    const [semantic, lexical] = await Promise.allSettled([
      request.mode === 'lexical'
        ? Promise.resolve(null)
        : this.semantic(space, model, request.query, { topK: depth, ...scope }),
      request.mode === 'semantic'
        ? Promise.resolve(null)
        : this.lexical.search(space, { text: request.query, topK: depth, ...scope }),
    ]);
    const lists: Ranked<Candidate & { score: number }>[] = [];
    const failures: DegradedReason[] = [];
    if (semantic.status === 'rejected') {
      this.logger.warn(`vector search failed: ${String(semantic.reason)}`);
      failures.push('vector_search_unavailable');
    } else if (semantic.value) {
      lists.push({ strategy: 'semantic', items: semantic.value });
    }
    if (lexical.status === 'rejected') {
      this.logger.warn(`lexical search failed: ${String(lexical.reason)}`);
      failures.push('lexical_search_unavailable');
    } else if (lexical.value) {
      lists.push({ strategy: 'lexical', items: lexical.value });
    }
    if (lists.length === 0) return { hits: undefined, failures };
    const hits: SearchHit[] = (
      lists.length === 1
        ? lists[0]!.items.map((item) => ({
            ...item,
            strategies: [lists[0]!.strategy],
            isMatch: true,
          }))
        : (request.fusion === 'rrf'
            ? reciprocalRankFusion(lists, keyOf)
            : convexCombination(lists, keyOf, this.tuning.semanticWeight)
          ).map(({ item, score, strategies }) => ({ ...item, score, strategies, isMatch: true }))
    ).filter((hit) => hit.score >= request.minScore);
    return { hits, failures };
  }

  /**
   * Re-scores the best `rerankCandidates` hits with the cross-encoder and orders them by its
   * score (the hit's `score` becomes the model's relevance logit); the rest keep their order
   * after them. A missing model or a failed call leaves the order as it was, and says why.
   */
  private async rerank(
    query: string,
    hits: SearchHit[],
  ): Promise<SearchHit[] | 'skipped: no_reranker_model' | 'skipped: reranker_failed'> {
    if (!this.reranker) return 'skipped: no_reranker_model';
    const head = hits.slice(0, this.tuning.rerankCandidates);
    let scores: number[];
    try {
      scores = await withSpan(
        'kb.rerank',
        { 'kb.model': this.reranker.model, 'kb.candidates': head.length },
        () =>
          this.reranker!.score(
            query,
            head.map((hit) => `${hit.title}\n${hit.text}`),
          ),
      );
    } catch (error) {
      this.logger.warn(`rerank failed, fused order kept: ${String(error)}`);
      return 'skipped: reranker_failed';
    }
    const rescored = head
      .map((hit, i) => ({ hit: { ...hit, score: scores[i]! }, i }))
      .sort((a, b) => b.hit.score - a.hit.score || a.i - b.i)
      .map(({ hit }) => hit);
    return [...rescored, ...hits.slice(head.length)];
  }

  /**
   * Re-orders the best `pool` hits by maximal marginal relevance over their stored vectors; the
   * rest keep their order after them. Undefined when the vectors cannot be read.
   */
  private async diversify(
    space: IndexSpace,
    hits: SearchHit[],
    lambda: number,
    pool: number,
  ): Promise<SearchHit[] | undefined> {
    const head = hits.slice(0, pool);
    let vectors: Map<string, number[]>;
    try {
      vectors = await this.vectors.fetchVectors(space, head);
    } catch (error) {
      this.logger.warn(`MMR skipped, vectors unavailable: ${String(error)}`);
      return undefined;
    }
    const byKey = new Map(head.map((hit) => [keyOf(hit), hit]));
    const order = maximalMarginalRelevance(
      head.map((hit) => ({
        key: keyOf(hit),
        relevance: hit.score,
        vector: vectors.get(keyOf(hit)),
      })),
      lambda,
      head.length,
    );
    return [...order.map((key) => byKey.get(key)!), ...hits.slice(pool)];
  }

  /**
   * Adds up to `radius` chunks before and after each hit, read from the lexical index (which holds
   * every chunk's text), from the same document version only, so a neighbour never crosses into
   * another document. Each hit is followed by its neighbours in document order; a chunk already in
   * the results is not repeated. A failure to read neighbours leaves the hits as they are.
   */
  private async withNeighbors(
    spaceOf: (hit: SearchHit) => IndexSpace,
    hits: SearchHit[],
    radius: number,
  ): Promise<SearchHit[]> {
    let around;
    try {
      const bySpace = new Map<IndexSpace, SearchHit[]>();
      for (const hit of hits)
        bySpace.set(spaceOf(hit), [...(bySpace.get(spaceOf(hit)) ?? []), hit]);
      around = (
        await Promise.all(
          [...bySpace].map(([space, anchors]) => this.lexical.chunksAround(space, anchors, radius)),
        )
      ).flat();
    } catch (error) {
      this.logger.warn(`neighbours unavailable: ${String(error)}`);
      return hits;
    }
    const seen = new Set(hits.map(keyOf));
    const result: SearchHit[] = [];
    for (const hit of hits) {
      const neighbours = around
        .filter(
          (c) =>
            c.documentId === hit.documentId &&
            c.documentVersion === hit.documentVersion &&
            Math.abs(c.chunkIndex - hit.chunkIndex) <= radius,
        )
        .sort((a, b) => a.chunkIndex - b.chunkIndex);
      for (const chunk of neighbours) {
        if (chunk.chunkIndex === hit.chunkIndex) {
          result.push(hit);
        } else if (!seen.has(keyOf(chunk))) {
          seen.add(keyOf(chunk));
          result.push({ ...chunk, score: hit.score, strategies: hit.strategies, isMatch: false });
        }
      }
      if (!neighbours.some((c) => c.chunkIndex === hit.chunkIndex)) result.push(hit);
    }
    return result;
  }

  private async semantic(
    space: IndexSpace,
    model: string | undefined,
    query: string,
    scope: Omit<VectorQuery, 'vector'>,
  ) {
    const embedder = model === undefined ? this.embedder : this.embedders?.get(model);
    if (!embedder) throw new Error(`model "${model}" is not served by query-service`);
    const vector = await this.embedQuery(embedder, query);
    return this.vectors.query(space, { vector, ...scope });
  }

  /**
   * The query's embedding, from the Redis cache when another search embedded the same text with
   * the same model; the model runs on a miss only.
   */
  private async embedQuery(embedder: EmbeddingProvider, query: string): Promise<number[]> {
    const text = query.trim().replace(/\s+/g, ' ');
    const key = `kb:qemb:v1:${embedder.model}:${createHash('sha256').update(text).digest('base64url')}`;
    const cached = await this.cache?.get(key);
    if (cached) {
      const bytes = Buffer.from(cached, 'base64');
      return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    }
    const [vector] = await withSpan('kb.embed_query', { 'kb.model': embedder.model }, () =>
      embedder.embed([text]),
    );
    if (!vector) throw new Error('embedding provider returned no vector');
    await this.cache?.set(key, Buffer.from(new Float32Array(vector).buffer).toString('base64'));
    return vector;
  }
}
