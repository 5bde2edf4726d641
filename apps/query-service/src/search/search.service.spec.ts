import { toTenantId } from '@kb/contracts';
import { TestEmbeddingProvider } from '@kb/embeddings';
import type { LexicalIndex, LexicalMatch, LexicalQuery } from '@kb/lexical-index';
import type { VectorMatch, VectorQuery, VectorStore } from '@kb/vector-store';
import type { SearchCache } from '../cache/search-cache';
import { SearchError } from './search.errors';
import { searchRequestSchema } from './search.model';
import type { Reranker } from './reranker';
import { SearchService, mergeSpaces, type SearchTuning } from './search.service';

const match = (chunkIndex: number, score: number): VectorMatch & LexicalMatch => ({
  documentId: 'd1',
  documentVersion: 1,
  chunkIndex,
  title: 't',
  text: `chunk ${chunkIndex}`,
  startOffset: 0,
  endOffset: 1,
  score,
});

/** In-memory stand-ins for the two indexes; `fail` makes a call reject as an outage would. */
function fakes(
  vector: VectorMatch[],
  lexical: LexicalMatch[],
  fail: { vector?: boolean; lexical?: boolean } = {},
  extra: {
    /** Stored vectors by chunk index, for MMR. */
    stored?: Record<number, number[]>;
    cache?: SearchCache;
    embedder?: TestEmbeddingProvider;
    calls?: { vector: VectorQuery[]; lexical: LexicalQuery[] };
    tuning?: SearchTuning;
    reranker?: Reranker;
    spaces?: Array<{ space: string; model: string | undefined }>;
    /** The tenant's index generation; throwing makes it unreadable. */
    generation?: () => number;
    embedders?: ReadonlyMap<string, TestEmbeddingProvider>;
  } = {},
) {
  const vectors = {
    query: async (namespace: string, query: VectorQuery) => {
      extra.calls?.vector.push({ ...query, namespace } as VectorQuery);
      if (fail.vector) throw new Error('vector store down');
      return vector;
    },
    fetchVectors: async (_tenant: string, chunks: VectorMatch[]) => {
      if (fail.vector) throw new Error('vector store down');
      return new Map(
        chunks.flatMap((c) => {
          const stored = extra.stored?.[c.chunkIndex];
          return stored ? [[`${c.documentId}#${c.documentVersion}#${c.chunkIndex}`, stored]] : [];
        }),
      );
    },
  } as unknown as VectorStore;
  const lexicalIndex = {
    search: async (namespace: string, query: LexicalQuery) => {
      extra.calls?.lexical.push({ ...query, namespace } as LexicalQuery);
      if (fail.lexical) throw new Error('postgres down');
      return lexical;
    },
    // Two documents of four chunks each: d1 #0..3 and d2 #0..3.
    chunksAround: async (
      _tenant: string,
      anchors: Array<{ documentId: string; chunkIndex: number }>,
      radius: number,
    ) =>
      ['d1', 'd2']
        .flatMap((documentId) =>
          [0, 1, 2, 3].map((chunkIndex) => ({ ...match(chunkIndex, 0), documentId })),
        )
        .filter((c) =>
          anchors.some(
            (a) => a.documentId === c.documentId && Math.abs(a.chunkIndex - c.chunkIndex) <= radius,
          ),
        ),
  } as unknown as LexicalIndex;
  return new SearchService(
    extra.embedder ?? new TestEmbeddingProvider(),
    vectors,
    lexicalIndex,
    {
      current: async () => (extra.generation ? extra.generation() : 0),
      knowledgeBaseSpaces: async (tenantId: string) =>
        extra.spaces ?? [{ space: tenantId, model: undefined }],
    },
    extra.cache ?? null,
    extra.tuning,
    extra.reranker ?? null,
    extra.embedders ?? null,
  );
}

/** A result cache in a Map. */
function memoryCache() {
  const entries = new Map<string, string>();
  const cache: SearchCache = {
    get: async (key) => entries.get(key),
    set: async (key, value) => void entries.set(key, value),
    counters: { hits: 0, misses: 0, errors: 0 },
    close: async () => undefined,
  };
  return { cache, entries };
}

const tenant = toTenantId('t1');
const request = (
  mode: 'hybrid' | 'semantic' | 'lexical',
  topK = 10,
  fusion: 'rrf' | 'convex' = 'rrf',
) => searchRequestSchema.parse({ query: 'q', topK, mode, fusion });

describe('SearchService', () => {
  it('fuses with a convex combination by default, weighting semantic by 0.7', async () => {
    const service = fakes(
      [match(1, 0.9), match(2, 0.8), match(5, 0.1)],
      [match(2, 3), match(3, 2), match(4, 1)],
    );
    const response = await service.search(tenant, searchRequestSchema.parse({ query: 'q' }));
    // semantic 1 → 1, 2 → .875, 5 → 0; lexical 2 → 1, 3 → .5, 4 → 0
    expect(response.hits.map((h) => h.chunkIndex)).toEqual([2, 1, 3, 5, 4]);
    const expected = [0.7 * 0.875 + 0.3, 0.7, 0.3 * 0.5, 0, 0];
    response.hits.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i]!, 12));
  });

  it('serves a cached result only at the generation it was computed at', async () => {
    const { cache } = memoryCache();
    let generation = 1;
    const calls = { vector: [] as VectorQuery[], lexical: [] as LexicalQuery[] };
    const service = fakes(
      [match(1, 0.9)],
      [],
      {},
      {
        cache,
        calls,
        generation: () => {
          if (generation < 0) throw new Error('postgres down');
          return generation;
        },
      },
    );
    const outcome = async () => (await service.search(tenant, request('semantic'))).cache;
    expect(await outcome()).toBe('miss');
    expect(await outcome()).toBe('hit');
    generation = 2; // indexing changed something
    expect(await outcome()).toBe('miss');
    expect(await outcome()).toBe('hit');
    generation = -1; // unreadable: no cache, still an answer
    expect(await outcome()).toBe('off');
    expect(calls.vector).toHaveLength(3);
  });

  it('applies the configured semantic weight, and keys cached results by it', async () => {
    const { cache } = memoryCache();
    const ranking = async (semanticWeight: number) => {
      const service = fakes(
        [match(1, 0.9), match(2, 0.1)],
        [match(2, 3), match(1, 1)],
        {},
        {
          cache,
          tuning: { semanticWeight, rerankCandidates: 30 },
        },
      );
      const response = await service.search(tenant, searchRequestSchema.parse({ query: 'q' }));
      return { order: response.hits.map((h) => h.chunkIndex), cache: response.cache };
    };
    expect(await ranking(0.8)).toEqual({ order: [1, 2], cache: 'miss' });
    // Same request, same generation, another weight: a fresh ranking, not the cached one.
    expect(await ranking(0.2)).toEqual({ order: [2, 1], cache: 'miss' });
    expect(await ranking(0.2)).toEqual({ order: [2, 1], cache: 'hit' });
  });

  it('fuses both strategies with RRF when asked, and names who found each hit', async () => {
    const service = fakes([match(1, 0.9), match(2, 0.8)], [match(2, 3), match(3, 2)]);
    const response = await service.search(tenant, request('hybrid'));
    expect(response.hits.map((h) => h.chunkIndex)).toEqual([2, 1, 3]);
    expect(response.hits[0]!.strategies).toEqual(['semantic', 'lexical']);
    expect(response.hits[0]!.score).toBeCloseTo(1 / 62 + 1 / 61, 12);
    expect(response).toMatchObject({ degraded: false, mode: 'hybrid' });
  });

  it('returns one strategy’s own scores in single-strategy modes', async () => {
    const service = fakes([match(1, 0.9)], [match(3, 2)]);
    expect((await service.search(tenant, request('semantic'))).hits).toEqual([
      { ...match(1, 0.9), strategies: ['semantic'], isMatch: true },
    ]);
    expect((await service.search(tenant, request('lexical'))).hits).toEqual([
      { ...match(3, 2), strategies: ['lexical'], isMatch: true },
    ]);
  });

  it('cuts to topK after fusion', async () => {
    const service = fakes([match(1, 0.9), match(2, 0.8)], [match(3, 3), match(4, 2)]);
    expect((await service.search(tenant, request('hybrid', 2))).hits).toHaveLength(2);
  });

  it('degrades to lexical results when vector search fails, and the reverse', async () => {
    const noVectors = await fakes([], [match(3, 2)], { vector: true }).search(
      tenant,
      request('hybrid'),
    );
    expect(noVectors).toMatchObject({
      degraded: true,
      degradedReason: 'vector_search_unavailable',
    });
    expect(noVectors.hits.map((h) => h.chunkIndex)).toEqual([3]);
    const noLexical = await fakes([match(1, 0.9)], [], { lexical: true }).search(
      tenant,
      request('hybrid'),
    );
    expect(noLexical).toMatchObject({
      degraded: true,
      degradedReason: 'lexical_search_unavailable',
    });
  });

  it('adds neighbours around each hit from the same document only, marked as not matching', async () => {
    const service = fakes([match(0, 0.9), match(3, 0.5)], []);
    const response = await service.search(
      tenant,
      searchRequestSchema.parse({ query: 'q', mode: 'semantic', neighbors: 1 }),
    );
    expect(response.hits.map((h) => [h.documentId, h.chunkIndex, h.isMatch])).toEqual([
      ['d1', 0, true],
      ['d1', 1, false],
      ['d1', 2, false],
      ['d1', 3, true],
    ]);
    expect(response.hits[1]!.score).toBe(0.9); // a neighbour carries its hit's score
  });

  it('labels confidence by agreement, drops hits under minScore, and says rerank was skipped', async () => {
    const agree = await fakes([match(2, 0.9), match(1, 0.8)], [match(2, 3), match(3, 2)]).search(
      tenant,
      searchRequestSchema.parse({ query: 'q', rerank: true }),
    );
    expect(agree).toMatchObject({ confidence: 'high', rerank: 'skipped: no_reranker_model' });
    // Convex: 1 and 3 tie at 0.5 on one strategy each; 2, found by both, normalizes to 0 in both.
    const partly = await fakes([match(1, 0.9), match(2, 0.1)], [match(3, 3), match(2, 1)]).search(
      tenant,
      request('hybrid', 10, 'convex'),
    );
    expect(partly.confidence).toBe('medium');
    const none = await fakes([match(1, 0.9)], [match(3, 3)]).search(tenant, request('hybrid'));
    expect(none).toMatchObject({ confidence: 'low', rerank: 'off' });
    const filtered = await fakes([match(1, 0.9), match(2, 0.4)], []).search(
      tenant,
      searchRequestSchema.parse({ query: 'q', mode: 'semantic', minScore: 0.5 }),
    );
    expect(filtered.hits.map((h) => h.chunkIndex)).toEqual([1]);
  });

  it('rejects more than five neighbours', () => {
    expect(searchRequestSchema.safeParse({ query: 'q', neighbors: 6 }).success).toBe(false);
  });

  it('answers 503 when nothing can serve the request', async () => {
    await expect(
      fakes([], [], { vector: true, lexical: true }).search(tenant, request('hybrid')),
    ).rejects.toMatchObject({
      kind: 'unavailable', // 503 over REST, UNAVAILABLE over gRPC (ERROR_STATUS)
      code: 'search_unavailable',
    });
    await expect(
      fakes([], [], { vector: true }).search(tenant, request('semantic')),
    ).rejects.toBeInstanceOf(SearchError);
  });

  it('passes the parsed filter and knowledge bases to both strategies', async () => {
    const calls = { vector: [] as VectorQuery[], lexical: [] as LexicalQuery[] };
    await fakes([match(1, 0.9)], [match(1, 2)], {}, { calls }).search(
      tenant,
      searchRequestSchema.parse({
        query: 'q',
        knowledgeBaseIds: ['kb1'],
        filter: { tags: 'finance' },
      }),
    );
    const filter = { kind: 'compare', field: { kind: 'tags' }, operator: '$eq', value: 'finance' };
    expect(calls.vector[0]).toMatchObject({ filter, knowledgeBaseIds: ['kb1'] });
    expect(calls.lexical[0]).toMatchObject({ text: 'q', filter, knowledgeBaseIds: ['kb1'] });
  });

  it('rejects a malformed filter with the path and reason', () => {
    const result = searchRequestSchema.safeParse({ query: 'q', filter: { tags: { $regex: 'x' } } });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({
      path: ['filter'],
      message: expect.stringContaining('filter at tags.$regex: unknown operator "$regex"'),
    });
  });

  it('pages through results with offset and nextOffset, asking each strategy for enough', async () => {
    const calls = { vector: [] as VectorQuery[], lexical: [] as LexicalQuery[] };
    const many = Array.from({ length: 7 }, (_, i) => match(i, 1 - i / 10));
    const service = fakes(many, [], {}, { calls });
    const page = (offset: number) =>
      service.search(
        tenant,
        searchRequestSchema.parse({ query: 'q', mode: 'semantic', topK: 3, offset }),
      );
    const first = await page(0);
    expect(first.hits.map((h) => h.chunkIndex)).toEqual([0, 1, 2]);
    expect(first.nextOffset).toBe(3);
    const last = await page(6);
    expect(last.hits.map((h) => h.chunkIndex)).toEqual([6]);
    expect(last.nextOffset).toBeUndefined();
    expect(calls.vector.map((q) => q.topK)).toEqual([3, 9]);
    expect(searchRequestSchema.safeParse({ query: 'q', topK: 100, offset: 101 }).success).toBe(
      false,
    );
  });

  it('re-orders by MMR over stored vectors, and says when it could not', async () => {
    // 0 and 1 are near-duplicates; 2 is less relevant but different.
    const stored = { 0: [1, 0], 1: [0.99, 0.14], 2: [0, 1] };
    const hits = [match(0, 0.9), match(1, 0.85), match(2, 0.5)];
    const mmr = (lambda: number) =>
      searchRequestSchema.parse({ query: 'q', mode: 'semantic', mmr: true, mmrLambda: lambda });
    const diverse = await fakes(hits, [], {}, { stored }).search(tenant, mmr(0.5));
    expect(diverse.hits.map((h) => h.chunkIndex)).toEqual([0, 2, 1]);
    expect(diverse.mmr).toBe('applied');
    const relevant = await fakes(hits, [], {}, { stored }).search(tenant, mmr(1));
    expect(relevant.hits.map((h) => h.chunkIndex)).toEqual([0, 1, 2]);
    const lexicalOnly = await fakes([], hits, { vector: true }, { stored }).search(
      tenant,
      searchRequestSchema.parse({ query: 'q', mmr: true }),
    );
    expect(lexicalOnly.mmr).toBe('skipped: vector_search_unavailable');
    expect(lexicalOnly.hits.map((h) => h.chunkIndex)).toEqual([0, 1, 2]);
  });

  it('embeds a query once and reuses the cached embedding', async () => {
    const { cache, entries } = memoryCache();
    const embedder = new TestEmbeddingProvider();
    const embed = jest.spyOn(embedder, 'embed');
    const calls = { vector: [] as VectorQuery[], lexical: [] as LexicalQuery[] };
    const service = fakes([match(1, 0.9)], [], {}, { cache, embedder, calls });
    await service.search(tenant, request('semantic', 5));
    await service.search(tenant, request('semantic', 6)); // another result-cache key
    expect(embed).toHaveBeenCalledTimes(1);
    expect(calls.vector).toHaveLength(2);
    const [first, second] = calls.vector.map((q) => q.vector);
    expect(second).toEqual(Array.from(new Float32Array(first!)));
    expect([...entries.keys()].filter((k) => k.startsWith('kb:qemb:'))).toHaveLength(1);
  });

  it('never returns two versions of a document, even while an index holds both', async () => {
    const v = (version: number, chunkIndex: number, score: number) => ({
      ...match(chunkIndex, score),
      documentVersion: version,
    });
    const response = await fakes(
      [v(1, 0, 0.9), v(2, 0, 0.8), v(1, 1, 0.7)],
      [v(1, 1, 3), v(2, 1, 2)],
    ).search(tenant, request('hybrid'));
    expect(response.hits.map((h) => [h.documentVersion, h.chunkIndex])).toEqual(
      expect.arrayContaining([
        [2, 0],
        [2, 1],
      ]),
    );
    expect(response.hits.every((h) => h.documentVersion === 2)).toBe(true);
  });

  describe('rerank', () => {
    /** FAKE cross-encoder: scores a passage by how often it says "rigging"; `fail` rejects. */
    const fakeReranker = (fail = false) => {
      const calls: Array<{ query: string; passages: string[] }> = [];
      const reranker: Reranker = {
        model: 'fake-cross-encoder',
        score: async (query, passages) => {
          calls.push({ query, passages });
          if (fail) throw new Error('model crashed');
          return passages.map((p) => (p.match(/rigging/g) ?? []).length);
        },
        close: async () => undefined,
      };
      return { reranker, calls };
    };
    const text = (chunkIndex: number, body: string) => ({ ...match(chunkIndex, 0), text: body });
    const hits = [
      { ...text(0, 'hull'), score: 0.9 },
      { ...text(1, 'rigging and more rigging'), score: 0.8 },
      { ...text(2, 'rigging'), score: 0.7 },
      { ...text(3, 'rigging rigging rigging'), score: 0.6 },
    ];

    it('orders the top candidates by the cross-encoder and keeps the rest after them', async () => {
      const { reranker, calls } = fakeReranker();
      const service = fakes(
        hits,
        [],
        {},
        { reranker, tuning: { semanticWeight: 0.7, rerankCandidates: 3 } },
      );
      const response = await service.search(
        tenant,
        searchRequestSchema.parse({ query: 'ropes', mode: 'semantic', rerank: true }),
      );
      expect(response.rerank).toBe('applied');
      expect(response.hits.map((h) => [h.chunkIndex, h.score])).toEqual([
        [1, 2],
        [2, 1],
        [0, 0],
        [3, 0.6], // beyond the 3 candidates: not re-scored, kept after them
      ]);
      expect(calls).toEqual([
        { query: 'ropes', passages: ['t\nhull', 't\nrigging and more rigging', 't\nrigging'] },
      ]);
    });

    it('leaves the fused order when not asked, or when the model fails, and says so', async () => {
      const { reranker, calls } = fakeReranker();
      const off = await fakes(hits, [], {}, { reranker }).search(tenant, request('semantic'));
      expect(off.rerank).toBe('off');
      expect(calls).toHaveLength(0);
      const failed = await fakes(hits, [], {}, { reranker: fakeReranker(true).reranker }).search(
        tenant,
        searchRequestSchema.parse({ query: 'q', mode: 'semantic', rerank: true }),
      );
      expect(failed.rerank).toBe('skipped: reranker_failed');
      expect(failed.hits.map((h) => h.chunkIndex)).toEqual([0, 1, 2, 3]);
    });
  });

  describe('index spaces (one per pipeline)', () => {
    it('searches each space with its own model and merges the fused lists', async () => {
      const calls = { vector: [] as VectorQuery[], lexical: [] as LexicalQuery[] };
      const second = new TestEmbeddingProvider(8);
      const service = fakes(
        [match(1, 0.9)],
        [match(1, 3)],
        {},
        {
          calls,
          spaces: [
            { space: 't1', model: undefined },
            { space: 't1~abc', model: second.model },
          ],
          embedders: new Map([[second.model, second]]),
        },
      );
      const response = await service.search(
        tenant,
        searchRequestSchema.parse({ query: 'q', knowledgeBaseIds: ['a', 'b'], mmr: true }),
      );
      const namespaces = (list: Array<VectorQuery | LexicalQuery>) =>
        list.map((q) => (q as unknown as { namespace: string }).namespace).sort();
      expect(namespaces(calls.vector)).toEqual(['t1', 't1~abc']);
      expect(namespaces(calls.lexical)).toEqual(['t1', 't1~abc']);
      // The second space's query vector comes from its own model (8 dimensions).
      expect(calls.vector.map((q) => q.vector.length).sort((a, b) => a - b)).toEqual([8, 64]);
      // The same passage found in both spaces comes back once; MMR cannot mix vector spaces.
      expect(response.hits).toHaveLength(1);
      expect(response.mmr).toBe('skipped: several_vector_spaces');
    });

    it('merges by score and keeps one copy of a passage', () => {
      const hit = (documentId: string, start: number, score: number) => ({
        ...match(0, score),
        documentId,
        startOffset: start,
        endOffset: start + 10,
        strategies: ['semantic' as const],
        isMatch: true,
      });
      expect(
        mergeSpaces([
          [hit('a', 0, 0.9), hit('b', 0, 0.5)],
          [hit('a', 0, 0.7), hit('a', 20, 0.8)],
        ]).map((h) => [h.documentId, h.startOffset, h.score]),
      ).toEqual([
        ['a', 0, 0.9],
        ['a', 20, 0.8],
        ['b', 0, 0.5],
      ]);
    });
  });
});
