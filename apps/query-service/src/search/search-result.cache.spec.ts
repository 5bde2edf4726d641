import { toTenantId } from '@kb/contracts';

import { memoryCache } from '../../test/support/search.fakes';
import {
  DEFAULT_SEARCH_TUNING,
  type SearchRequest,
  searchRequestSchema,
  type SearchResponse,
} from './search.model';
import { searchCacheKey, SearchResultCache } from './search-result.cache';

/** A search that counts its runs; each run answers with its own number as `tookMs`. */
function counted(
  degraded = false,
  steps: Partial<Pick<SearchResponse, 'rerank' | 'mmr' | 'details'>> = {},
) {
  let runs = 0;
  const compute = async (): Promise<SearchResponse> => ({
    hits: [],
    tookMs: ++runs,
    cache: 'off',
    mode: 'hybrid',
    confidence: 'low',
    degraded,
    ...(degraded ? { degradedReason: 'vector_search_unavailable' } : {}),
    rerank: steps.rerank ?? 'off',
    mmr: steps.mmr ?? 'off',
    details: steps.details ?? 'applied',
    queryType: 'keywords',
    total: 0,
    totalRelation: 'eq',
  });
  return { compute, runs: () => runs };
}

/** The tenant's index generation; a negative one cannot be read. */
function generations(initial: number) {
  const state = { generation: initial, reads: 0 };
  const reader = {
    current: async () => {
      state.reads++;
      if (state.generation < 0) throw new Error('postgres down');
      return state.generation;
    },
  };
  return { reader, state };
}

const tenant = toTenantId('t1');
const request = (input: Partial<SearchRequest> = {}): SearchRequest => ({
  ...searchRequestSchema.parse({ query: 'q' }),
  ...input,
});

describe('SearchResultCache', () => {
  it('serves a cached result only at the generation it was computed at', async () => {
    const { cache, generations: mirror } = memoryCache();
    const { reader, state } = generations(1);
    const results = new SearchResultCache(cache, reader, DEFAULT_SEARCH_TUNING);
    const search = counted();
    const outcome = async () =>
      (await results.getOrCompute(tenant, undefined, request(), search.compute)).cache;
    expect(await outcome()).toBe('miss');
    expect(await outcome()).toBe('hit');
    // Indexing changed something: it bumps Postgres and raises the mirror.
    state.generation = 2;
    await cache.raiseGeneration(tenant, 2);
    expect(await outcome()).toBe('miss');
    expect(await outcome()).toBe('hit');
    // A raise that was lost: the old entry answers until the mirror expires, then Postgres rules.
    state.generation = 3;
    expect(await outcome()).toBe('hit');
    mirror.delete(tenant);
    expect(await outcome()).toBe('miss');
    expect(mirror.get(tenant)).toBe(3);
    mirror.delete(tenant);
    state.generation = -1; // no mirror and Postgres unreadable: no cache, still an answer
    expect(await outcome()).toBe('off');
    expect(search.runs()).toBe(4);
  });

  it("hands a miss the query embedding's entry read in the same round trip", async () => {
    const { cache, entries, rounds } = memoryCache();
    const { reader } = generations(7);
    const results = new SearchResultCache(cache, reader, DEFAULT_SEARCH_TUNING);
    const search = counted();
    const handed: unknown[] = [];
    const compute = (prefetched?: unknown) => {
      handed.push(prefetched);
      return search.compute();
    };
    entries.set('kb:qemb:v1:m:abc', 'vector');
    await results.getOrCompute(tenant, undefined, request(), compute, 'kb:qemb:v1:m:abc');
    await results.getOrCompute(tenant, undefined, request({ query: 'other' }), compute, 'kb:x');
    await results.getOrCompute(tenant, undefined, request({ query: 'third' }), compute);
    expect(handed).toEqual([
      { key: 'kb:qemb:v1:m:abc', value: 'vector' },
      { key: 'kb:x', value: undefined },
      undefined,
    ]);
    expect(rounds.lookups).toBe(3);
  });

  it('answers a hit with one cache round trip and no Postgres read while the mirror holds the generation', async () => {
    const { cache, rounds } = memoryCache();
    const { reader, state } = generations(7);
    const results = new SearchResultCache(cache, reader, DEFAULT_SEARCH_TUNING);
    const search = counted();
    expect((await results.getOrCompute(tenant, undefined, request(), search.compute)).cache).toBe(
      'miss',
    );
    // The miss found no mirrored generation: one Postgres read, raised into the mirror.
    expect(state.reads).toBe(1);
    expect(rounds).toEqual({ lookups: 1, raises: 1 });
    for (let i = 0; i < 5; i++) {
      expect((await results.getOrCompute(tenant, undefined, request(), search.compute)).cache).toBe(
        'hit',
      );
    }
    expect(state.reads).toBe(1);
    expect(rounds).toEqual({ lookups: 6, raises: 1 });
  });

  it('answers a hit with the stored response', async () => {
    const { cache } = memoryCache();
    const results = new SearchResultCache(cache, generations(1).reader, DEFAULT_SEARCH_TUNING);
    const search = counted();
    const miss = await results.getOrCompute(tenant, undefined, request(), search.compute);
    const hit = await results.getOrCompute(tenant, undefined, request(), search.compute);
    expect(hit).toEqual({ ...miss, cache: 'hit' });
  });

  it('serves what Redis holds: a repeated entry is parsed once, a changed one again', async () => {
    const { cache, entries } = memoryCache();
    const results = new SearchResultCache(cache, generations(1).reader, DEFAULT_SEARCH_TUNING);
    const search = counted();
    await results.getOrCompute(tenant, undefined, request(), search.compute);
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const first = await results.getOrCompute(tenant, undefined, request(), search.compute);
      const second = await results.getOrCompute(tenant, undefined, request(), search.compute);
      expect(parse).not.toHaveBeenCalled();
      expect(second.hits).toBe(first.hits);
      // Shared between hits, so nobody may change it.
      expect(Object.isFrozen(first.hits)).toBe(true);
      // Another replica (or a later search) wrote the key: its text is served, not the memory.
      const [key, raw] = [...entries].find(([k]) => k.startsWith('kb:search'))!;
      const stored = JSON.parse(raw) as { generation: number; response: SearchResponse };
      entries.set(key, JSON.stringify({ ...stored, response: { ...stored.response, tookMs: 42 } }));
      parse.mockClear();
      const changed = await results.getOrCompute(tenant, undefined, request(), search.compute);
      expect(parse).toHaveBeenCalledTimes(1);
      expect(changed).toMatchObject({ cache: 'hit', tookMs: 42 });
      expect(search.runs()).toBe(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('keys entries by the semantic weight: a changed setting computes a fresh ranking', async () => {
    const { cache } = memoryCache();
    const search = counted();
    const outcome = async (semanticWeight: number) =>
      (
        await new SearchResultCache(cache, generations(1).reader, {
          ...DEFAULT_SEARCH_TUNING,
          semanticWeight,
        }).getOrCompute(tenant, undefined, request(), search.compute)
      ).cache;
    expect(await outcome(0.8)).toBe('miss');
    expect(await outcome(0.2)).toBe('miss');
    expect(await outcome(0.2)).toBe('hit');
  });

  it('keys entries by the pseudo-relevance feedback setting: turning it off computes afresh', async () => {
    const { cache } = memoryCache();
    const search = counted();
    const outcome = async (feedback: 'rm3' | 'none' | undefined) =>
      (
        await new SearchResultCache(cache, generations(1).reader, {
          ...DEFAULT_SEARCH_TUNING,
          feedback,
        }).getOrCompute(tenant, undefined, request(), search.compute)
      ).cache;
    expect(await outcome('rm3')).toBe('miss');
    expect(await outcome(undefined)).toBe('hit'); // absent means rm3
    expect(await outcome('none')).toBe('miss');
    expect(await outcome('none')).toBe('hit');
  });

  it('shares entries between callers with the same principals and the same normalized request', async () => {
    const { cache } = memoryCache();
    const results = new SearchResultCache(cache, generations(1).reader, DEFAULT_SEARCH_TUNING);
    const search = counted();
    const outcome = async (principals: string[] | undefined, query: string) =>
      (await results.getOrCompute(tenant, principals, request({ query }), search.compute)).cache;
    expect(await outcome(['user:a', 'group:x'], ' sail  rigging')).toBe('miss');
    expect(await outcome(['group:x', 'user:a'], 'sail rigging')).toBe('hit');
    // No case folding: a case-sensitive model or reranker may rank these differently.
    expect(await outcome(['group:x', 'user:a'], 'Sail rigging')).toBe('miss');
    expect(await outcome(['user:a'], 'sail rigging')).toBe('miss');
    expect(await outcome(undefined, 'sail rigging')).toBe('miss'); // unfiltered: its own entry
    expect(await outcome(undefined, 'sail rigging')).toBe('hit');
  });

  it('never stores a degraded answer', async () => {
    const { cache, entries } = memoryCache();
    const results = new SearchResultCache(cache, generations(1).reader, DEFAULT_SEARCH_TUNING);
    const search = counted(true);
    expect((await results.getOrCompute(tenant, undefined, request(), search.compute)).cache).toBe(
      'miss',
    );
    expect((await results.getOrCompute(tenant, undefined, request(), search.compute)).cache).toBe(
      'miss',
    );
    expect(entries.size).toBe(0);
  });

  it('never stores an answer whose rerank, MMR or hit details failed', async () => {
    const { cache, entries } = memoryCache();
    const results = new SearchResultCache(cache, generations(1).reader, DEFAULT_SEARCH_TUNING);
    const failed: Array<Partial<Pick<SearchResponse, 'rerank' | 'mmr' | 'details'>>> = [
      { rerank: 'skipped: reranker_failed' },
      { details: 'skipped: documents_unavailable' },
      { mmr: 'skipped: vector_search_unavailable' },
    ];
    for (const steps of failed) {
      const search = counted(false, steps);
      await results.getOrCompute(tenant, undefined, request(), search.compute);
      expect((await results.getOrCompute(tenant, undefined, request(), search.compute)).cache).toBe(
        'miss',
      );
    }
    expect(entries.size).toBe(0);
  });

  it('keys entries by the reranker model: another model computes a fresh ranking', async () => {
    const { cache } = memoryCache();
    const search = counted();
    const outcome = async (model: string | null) =>
      (
        await new SearchResultCache(
          cache,
          generations(1).reader,
          DEFAULT_SEARCH_TUNING,
          model ? { model } : null,
        ).getOrCompute(tenant, undefined, request({ rerank: true }), search.compute)
      ).cache;
    expect(await outcome('ms-marco-a')).toBe('miss');
    expect(await outcome('ms-marco-b')).toBe('miss');
    expect(await outcome(null)).toBe('miss');
    expect(await outcome('ms-marco-b')).toBe('hit');
  });

  it('computes every search, without reading the generation, when no cache is configured', async () => {
    const { reader, state } = generations(1);
    const results = new SearchResultCache(null, reader, DEFAULT_SEARCH_TUNING);
    const search = counted();
    expect((await results.getOrCompute(tenant, undefined, request(), search.compute)).cache).toBe(
      'off',
    );
    expect((await results.getOrCompute(tenant, undefined, request(), search.compute)).cache).toBe(
      'off',
    );
    expect(search.runs()).toBe(2);
    expect(state.reads).toBe(0);
  });
});

describe('searchCacheKey', () => {
  const base = {
    tenantId: 't1',
    principals: ['user:a', 'role:x'],
    request: { query: 'q', topK: 10 },
  };

  it('is stable under principal order and changes with tenant, principals and request', () => {
    const key = searchCacheKey(base);
    expect(searchCacheKey({ ...base, principals: ['role:x', 'user:a'] })).toBe(key);
    for (const changed of [
      { ...base, tenantId: 't2' },
      { ...base, principals: ['user:a'] },
      { ...base, request: { query: 'q', topK: 11 } },
    ]) {
      expect(searchCacheKey(changed)).not.toBe(key);
    }
    expect(key).toMatch(/^kb:search:v3:t1:/);
  });
});
