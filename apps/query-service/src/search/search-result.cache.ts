import { createHash } from 'node:crypto';

import { searchCachePrefix, type TenantId } from '@kb/contracts';
import type { IndexGenerations } from '@kb/index-state';
import { annotateActiveSpan, timedStage } from '@kb/observability';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { LRUCache } from 'lru-cache';

import type { SearchCache } from '../cache/search.cache';
import { GENERATIONS, RERANKER, SEARCH_CACHE, SEARCH_TUNING } from '../platform/tokens';
import type { Reranker } from './cross-encoder.reranker';
import type { PrefetchedEmbedding } from './query.embedder';
import {
  normalizeRequest,
  type SearchRequest,
  type SearchResponse,
  type SearchTuning,
} from './search.model';

/** A tenant's index generation, which indexing bumps after every change to the tenant's index. */
export type IndexGenerationReader = Pick<IndexGenerations, 'current'>;

/**
 * Builds the key: tenant, the caller's principals and the request. The index generation is not
 * in the key but in the entry (`CachedSearch`): the tenant's current generation (mirrored in
 * Redis, `searchGenerationKey`) and the entry are read in one MGET, and the entry is served only
 * when the two agree.
 */
export function searchCacheKey(parts: {
  tenantId: string;
  principals: string[];
  request: unknown;
}): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([[...parts.principals].sort(), parts.request]))
    .digest('base64url');
  return `${searchCachePrefix(parts.tenantId)}${digest}`;
}

/** A cached answer and the index generation it was computed at. */
export interface CachedSearch<T> {
  generation: number;
  response: T;
}

/** Entries kept parsed in memory, the least recently used dropped first (`SearchResultCache.parse`). */
const PARSED_ENTRIES = 1_000;

/**
 * Search results in the Redis cache. An entry answers only when it was computed at the tenant's
 * current index generation, so a result is not served after its content changed. The generation
 * comes from its Redis mirror, which indexing-service raises after every bump (a raise that is
 * lost is made up within `SEARCH_GENERATION_TTL_MS`, when the mirror expires and Postgres is read
 * again: docs/adr/0029); with no Redis, or no readable generation, every search is computed
 * (`cache: 'off'`).
 */
@Injectable()
export class SearchResultCache {
  private readonly logger = new Logger(SearchResultCache.name);
  /** The last entries read or written, by key: the stored text and its parsed (frozen) form. */
  private readonly parsed = new LRUCache<
    string,
    { raw: string; entry: CachedSearch<SearchResponse> }
  >({ max: PARSED_ENTRIES });

  constructor(
    /** Null when no Redis is configured (REDIS_URL unset). */
    @Inject(SEARCH_CACHE) private readonly cache: SearchCache | null,
    @Inject(GENERATIONS) private readonly generations: IndexGenerationReader,
    @Inject(SEARCH_TUNING) private readonly tuning: SearchTuning,
    /** The installed cross-encoder, if any: its model ranks reranked answers. */
    @Optional()
    @Inject(RERANKER)
    private readonly reranker: Pick<Reranker, 'model'> | null = null,
  ) {}

  /**
   * The cached answer to `request`, or `compute`'s, stored unless degraded. `principals`
   * undefined: no ACL filter (a tenant admin, or a trusted internal caller). A hit keeps the
   * stored `tookMs`: the caller times it.
   */
  async getOrCompute(
    tenantId: TenantId,
    principals: string[] | undefined,
    request: SearchRequest,
    compute: (prefetched?: PrefetchedEmbedding) => Promise<SearchResponse>,
    embeddingKey?: string,
  ): Promise<SearchResponse> {
    const cache = this.cache;
    if (!cache) return this.uncached(() => compute());
    const key = searchCacheKey({
      tenantId,
      // Callers with the same principal set see the same documents, so they share entries.
      principals: principals ?? ['*unfiltered'],
      // The fusion weight, pseudo-relevance feedback and the reranker rank the results too: a
      // changed setting or model must not serve old rankings.
      request: [
        normalizeRequest(request),
        this.tuning.semanticWeight,
        this.tuning.feedback ?? 'rm3',
        this.reranker?.model ?? null,
      ],
    });
    // One round trip: the tenant's generation as mirrored in Redis and the entry. Postgres is read
    // only when the mirror holds no generation (expired, never raised, Redis failing), and the
    // generation read there is raised into the mirror for the searches after this one.
    // A miss's query embedding (`embeddingKey`) rides in the same MGET: the model then starts
    // without a round trip of its own to Redis.
    const found = await timedStage('cache', () => cache.lookup(tenantId, key, embeddingKey));
    const prefetched = embeddingKey ? { key: embeddingKey, value: found.also } : undefined;
    let generation = found.generation;
    if (generation === undefined) {
      generation = await timedStage('generation', () => this.generation(tenantId));
      if (generation === undefined) return this.uncached(() => compute(prefetched));
      void cache.raiseGeneration(tenantId, generation);
    }
    const entry = found.value ? this.parse(key, found.value) : undefined;
    if (entry?.generation === generation) {
      annotateActiveSpan({ 'kb.cache': 'hit' });
      return { ...entry.response, cache: 'hit' };
    }
    annotateActiveSpan({ 'kb.cache': 'miss' });
    const response = await compute(prefetched);
    // A degraded answer, or one whose rerank or MMR failed, is not kept: the next search may
    // find every part up again.
    // Stored behind the answer, not before it: the write fails open anyway, and the entry names
    // its generation, so a late write can never be served after a bump.
    if (isComplete(response)) {
      const fresh: CachedSearch<SearchResponse> = { generation, response };
      const raw = JSON.stringify(fresh);
      void cache.set(key, raw);
      this.remember(key, raw, JSON.parse(raw) as CachedSearch<SearchResponse>);
    }
    return { ...response, cache: 'miss' };
  }

  /**
   * The entry Redis returned, parsed. What is served is always what Redis holds at the
   * tenant's current generation: an entry is parsed again unless its text is the very text
   * parsed last time for the key (a string comparison, where parsing ~10 kB of hits and the
   * garbage it leaves were the largest share of a hit's own CPU, docs/adr/0029).
   */
  private parse(key: string, raw: string): CachedSearch<SearchResponse> {
    const known = this.parsed.get(key);
    if (known?.raw === raw) return known.entry;
    const entry = JSON.parse(raw) as CachedSearch<SearchResponse>;
    this.remember(key, raw, entry);
    return entry;
  }

  /** Shared by every hit on the key from now on, so frozen: no caller can change it for others. */
  private remember(key: string, raw: string, entry: CachedSearch<SearchResponse>): void {
    this.parsed.set(key, { raw, entry: deepFreeze(entry) });
  }

  private async uncached(compute: () => Promise<SearchResponse>): Promise<SearchResponse> {
    annotateActiveSpan({ 'kb.cache': 'off' });
    return { ...(await compute()), cache: 'off' };
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
}

/** True when no part of the answer was lost to an outage: it may be served again. */
function isComplete(response: SearchResponse): boolean {
  return (
    !response.degraded &&
    response.rerank !== 'skipped: reranker_failed' &&
    response.mmr !== 'skipped: vector_search_unavailable' &&
    !response.details.startsWith('skipped')
  );
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
