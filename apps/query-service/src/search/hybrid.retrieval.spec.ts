import { activeOnly, toIndexSpace, toTenantId } from '@kb/contracts';
import { TestEmbeddingProvider } from '@kb/embeddings';
import type { ChunkRef, ChunkText } from '@kb/lexical-index';
import type { VectorQuery } from '@kb/vector-store';

import { fakeIndexes, type IndexContents, newMatch } from '../../test/support/search.fakes';
import { HybridRetrieval, type IndexSpaceReader, type SpaceToSearch } from './hybrid.retrieval';
import { QueryEmbedder } from './query.embedder';
import { SearchError } from './search.errors';
import {
  chunkKey,
  DEFAULT_SEARCH_TUNING,
  type SearchRequestInput,
  searchRequestSchema,
} from './search.model';

const tenant = toTenantId('t1');
const second = new TestEmbeddingProvider(8);
const own: SpaceToSearch[] = [{ space: toIndexSpace('t1'), model: undefined }];

function retrieval(contents: IndexContents, semanticWeight = DEFAULT_SEARCH_TUNING.semanticWeight) {
  const { vectors, lexical, calls } = fakeIndexes(contents);
  const embedder = new QueryEmbedder(
    { main: new TestEmbeddingProvider(), mainName: 'all-MiniLM-L6-v2', extra: [second] },
    null,
  );
  const spaces: IndexSpaceReader = { knowledgeBaseSpaces: async () => own };
  const tuning = { ...DEFAULT_SEARCH_TUNING, semanticWeight };
  return { retrieval: new HybridRetrieval(embedder, vectors, lexical, spaces, tuning), calls };
}

/** One space searched for `input`, 100 candidates a side: its hits and the degraded reason. */
async function retrieve(
  contents: IndexContents,
  input: Omit<SearchRequestInput, 'query'> = {},
  semanticWeight?: number,
) {
  const { retrieval: r } = retrieval(contents, semanticWeight);
  const { bySpace, degradedReason } = await r.retrieve(
    own,
    searchRequestSchema.parse({ query: 'q', ...input }),
    {},
    100,
  );
  return { hits: bySpace[0]!.hits, degradedReason };
}
const order = (hits: Array<{ chunkIndex: number }>) => hits.map((h) => h.chunkIndex);

describe('HybridRetrieval', () => {
  it('fuses adaptively by default: a lexical hit that stands out outweighs a flat semantic list', async () => {
    // Semantic: 20 evenly spread scores, chunk 1 first, chunk 2 last (top z ≈ 1.66). Lexical:
    // chunk 2 far above 19 equal others (top z = √19 ≈ 4.36). With the prior α₀ = 0.6,
    // α = 0.6·1.65 / (0.6·1.65 + 0.4·4.36) ≈ 0.36, so chunk 2 (0.64) leads chunk 1 (0.36); the
    // fixed α = 0.7 puts chunk 1 first and chunk 2 below the semantic runners-up.
    const ids = Array.from({ length: 20 }, (_, i) => i + 1);
    const others = ids.filter((id) => id !== 2);
    const contents = {
      vector: [...others.map((id, i) => newMatch(id, 0.9 - i / 100)), newMatch(2, 0.9 - 19 / 100)],
      lexical: [newMatch(2, 10), ...others.map((id) => newMatch(id, 1))],
    };
    const adaptive = await retrieve(contents);
    expect(order(adaptive.hits).slice(0, 2)).toEqual([2, 1]);
    expect(adaptive.hits[0]!.score).toBeGreaterThan(0.5);
    const fixed = await retrieve(contents, { fusion: 'convex' });
    expect(order(fixed.hits)[0]).toBe(1);
    expect(order(fixed.hits).indexOf(2)).toBeGreaterThan(1);
  });

  it('fuses with a fixed-α convex combination when asked, weighting semantic by 0.7', async () => {
    const { hits } = await retrieve(
      {
        vector: [newMatch(1, 0.9), newMatch(2, 0.8), newMatch(5, 0.1)],
        lexical: [newMatch(2, 3), newMatch(3, 2), newMatch(4, 1)],
      },
      { fusion: 'convex' },
    );
    // semantic 1 → 1, 2 → .875, 5 → 0; lexical 2 → 1, 3 → .5, 4 → 0
    expect(order(hits)).toEqual([2, 1, 3, 5, 4]);
    const expected = [0.7 * 0.875 + 0.3, 0.7, 0.3 * 0.5, 0, 0];
    hits.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i]!, 12));
  });

  it('applies the configured semantic weight', async () => {
    const contents = {
      vector: [newMatch(1, 0.9), newMatch(2, 0.1)],
      lexical: [newMatch(2, 3), newMatch(1, 1)],
    };
    expect(order((await retrieve(contents, { fusion: 'convex' }, 0.8)).hits)).toEqual([1, 2]);
    expect(order((await retrieve(contents, { fusion: 'convex' }, 0.2)).hits)).toEqual([2, 1]);
  });

  it('fuses both strategies with RRF when asked, and names who found each hit', async () => {
    const { hits, degradedReason } = await retrieve(
      { vector: [newMatch(1, 0.9), newMatch(2, 0.8)], lexical: [newMatch(2, 3), newMatch(3, 2)] },
      { fusion: 'rrf' },
    );
    expect(order(hits)).toEqual([2, 1, 3]);
    expect(hits[0]!.strategies).toEqual(['semantic', 'lexical']);
    expect(hits[0]!.score).toBeCloseTo(1 / 62 + 1 / 61, 12);
    expect(degradedReason).toBeUndefined();
  });

  it('returns one strategy’s own scores in single-strategy modes', async () => {
    const contents = { vector: [newMatch(1, 0.9)], lexical: [newMatch(3, 2)] };
    expect((await retrieve(contents, { mode: 'semantic' })).hits).toEqual([
      { ...newMatch(1, 0.9), strategies: ['semantic'], isMatch: true },
    ]);
    expect((await retrieve(contents, { mode: 'lexical' })).hits).toEqual([
      { ...newMatch(3, 2), strategies: ['lexical'], isMatch: true },
    ]);
  });

  it('rounds BM25 scores it returns alone to two decimals (docs/adr/0019)', async () => {
    const lexical = [newMatch(3, 2.34567), newMatch(4, 0.004)];
    const alone = await retrieve({ lexical }, { mode: 'lexical' });
    expect(alone.hits.map((hit) => hit.score)).toEqual([2.35, 0]);
    const degraded = await retrieve({ lexical, down: { vector: true } });
    expect(degraded.hits.map((hit) => hit.score)).toEqual([2.35, 0]);
  });

  it('drops hits under minScore', async () => {
    const { hits } = await retrieve(
      { vector: [newMatch(1, 0.9), newMatch(2, 0.4)] },
      { mode: 'semantic', minScore: 0.5 },
    );
    expect(order(hits)).toEqual([1]);
  });

  it('degrades to lexical results when vector search fails, and the reverse', async () => {
    const noVectors = await retrieve({ lexical: [newMatch(3, 2)], down: { vector: true } });
    expect(noVectors.degradedReason).toBe('vector_search_unavailable');
    expect(order(noVectors.hits)).toEqual([3]);
    const noLexical = await retrieve({ vector: [newMatch(1, 0.9)], down: { lexical: true } });
    expect(noLexical.degradedReason).toBe('lexical_search_unavailable');
    expect(order(noLexical.hits)).toEqual([1]);
  });

  describe('query operators on the semantic side', () => {
    /** Vector hits 1–3, BM25 hit 1; the index says chunk 2 fails the query's operators. */
    function withOperators(failing: 'check' | 'none' = 'none') {
      const { vectors, lexical } = fakeIndexes({
        vector: [newMatch(1, 0.9), newMatch(2, 0.8), newMatch(3, 0.7)],
        lexical: [newMatch(1, 3)],
      });
      const asked: string[] = [];
      const matching = async (_space: unknown, query: string, chunks: ChunkRef[]) => {
        asked.push(query);
        if (failing === 'check') throw new Error('postgres down');
        return new Set(chunks.filter((c) => c.chunkIndex !== 2).map(chunkKey));
      };
      const embedder = new QueryEmbedder(
        { main: new TestEmbeddingProvider(), mainName: 'all-MiniLM-L6-v2', extra: [] },
        null,
      );
      const r = new HybridRetrieval(
        embedder,
        vectors,
        { ...lexical, matching },
        { knowledgeBaseSpaces: async () => own },
        DEFAULT_SEARCH_TUNING,
      );
      const search = async (input: SearchRequestInput) => {
        const found = await r.retrieve(own, searchRequestSchema.parse(input), {}, 100);
        return { hits: order(found.bySpace[0]!.hits), degradedReason: found.degradedReason };
      };
      return { search, asked };
    }

    it('holds vector hits to the query’s exclusions and phrases, as BM25’s are', async () => {
      const { search, asked } = withOperators();
      for (const mode of ['hybrid', 'auto'] as const) {
        const { hits, degradedReason } = await search({ query: 'tides -moon', mode });
        expect(hits.sort()).toEqual([1, 3]);
        expect(degradedReason).toBeUndefined();
      }
      expect(asked).toEqual(['tides -moon', 'tides -moon']);
    });

    it('checks nothing for plain words, nor in semantic mode', async () => {
      const { search, asked } = withOperators();
      expect((await search({ query: 'tides and the moon' })).hits.sort()).toEqual([1, 2, 3]);
      expect(
        (await search({ query: '"spring tides" -moon', mode: 'semantic' })).hits.sort(),
      ).toEqual([1, 2, 3]);
      expect(asked).toEqual([]);
    });

    it('keeps the vector hits unchecked and says so when the check fails', async () => {
      const { search } = withOperators('check');
      const { hits, degradedReason } = await search({ query: 'tides -moon' });
      expect(hits.sort()).toEqual([1, 2, 3]);
      expect(degradedReason).toBe('lexical_search_unavailable');
    });
  });

  it('answers 503 when nothing can serve the request', async () => {
    await expect(retrieve({ down: { vector: true, lexical: true } })).rejects.toMatchObject({
      kind: 'unavailable',
      code: 'search_unavailable',
      message:
        'hybrid search is unavailable (vector_search_unavailable, lexical_search_unavailable)',
    });
    await expect(retrieve({ down: { vector: true } }, { mode: 'semantic' })).rejects.toBeInstanceOf(
      SearchError,
    );
  });

  it('passes the scope and the depth to both strategies', async () => {
    const { retrieval: r, calls } = retrieval({ vector: [newMatch(1, 0.9)] });
    const request = searchRequestSchema.parse({ query: 'q', filter: { tags: 'finance' } });
    const scope = { filter: request.filter, knowledgeBaseIds: ['kb1'], principals: ['user:a'] };
    await r.retrieve(own, request, scope, 42);
    const filter = activeOnly(request.filter);
    expect(calls.query[0]!.query).toMatchObject({ ...scope, filter, topK: 42 });
    expect(calls.query[0]!.query.vector).toHaveLength(64);
    expect(calls.search[0]!.query).toEqual({ ...scope, filter, text: 'q', topK: 42 });
  });

  it('searches each space with its own model, and degrades a space whose model is not served', async () => {
    const { retrieval: r, calls } = retrieval({
      vector: [newMatch(1, 0.9)],
      lexical: [newMatch(1, 3)],
    });
    const spaces = [
      { space: toIndexSpace('t1'), model: undefined },
      { space: toIndexSpace('t1~abc'), model: second.model },
    ];
    const request = searchRequestSchema.parse({ query: 'q' });
    const both = await r.retrieve(spaces, request, {}, 100);
    expect(both.bySpace.map((s) => [s.space, order(s.hits)])).toEqual([
      ['t1', [1]],
      ['t1~abc', [1]],
    ]);
    expect(calls.query.map((c) => [c.space, c.query.vector.length])).toEqual([
      ['t1', 64],
      ['t1~abc', 8],
    ]);
    const unserved = await r.retrieve(
      [{ space: toIndexSpace('t1~def'), model: 'e5-large' }],
      request,
      {},
      100,
    );
    expect(unserved.degradedReason).toBe('vector_search_unavailable');
    expect(calls.query.map((c) => c.space)).not.toContain('t1~def');
  });

  it('starts the embedding before the spaces are known only when the main model is the only one', async () => {
    const { vectors, lexical, calls } = fakeIndexes({ vector: [newMatch(1, 0.9)] });
    const main = new TestEmbeddingProvider();
    const embed = jest.spyOn(main, 'embed');
    const spaces: IndexSpaceReader = { knowledgeBaseSpaces: async () => own };
    const only = new HybridRetrieval(
      new QueryEmbedder({ main, mainName: 'all-MiniLM-L6-v2', extra: [] }, null),
      vectors,
      lexical,
      spaces,
      DEFAULT_SEARCH_TUNING,
    );
    const request = searchRequestSchema.parse({ query: 'sail rigging' });
    const embedded = only.embedEarly(tenant, request);
    expect(embedded).toBeDefined();
    const twoSpaces: SpaceToSearch[] = [
      { space: toIndexSpace('t1'), model: undefined },
      { space: toIndexSpace('t1~abc'), model: 'all-MiniLM-L6-v2' },
    ];
    const { bySpace } = await only.retrieve(twoSpaces, request, {}, 100, embedded);
    // One model run for both spaces: the one started early.
    expect(embed).toHaveBeenCalledTimes(1);
    expect(bySpace.map((s) => s.hits.length)).toEqual([1, 1]);
    expect(calls.query[0]!.query.vector).toEqual(await embedded);
    // Lexical searches and other models' spaces cannot use it: nothing starts early.
    expect(
      only.embedEarly(tenant, searchRequestSchema.parse({ query: 'q', mode: 'lexical' })),
    ).toBe(undefined);
    const { retrieval: withExtra } = retrieval({});
    expect(withExtra.embedEarly(tenant, request)).toBeUndefined();
  });

  it('with other models served, starts early for knowledge bases last found on the main model only', async () => {
    const { vectors, lexical } = fakeIndexes({ vector: [newMatch(1, 0.9)] });
    const main = new TestEmbeddingProvider();
    const embed = jest.spyOn(main, 'embed');
    const recorded: Record<string, SpaceToSearch[]> = {
      kbMain: [{ space: toIndexSpace('t1~abc'), model: 'all-MiniLM-L6-v2' }],
      kbOther: [{ space: toIndexSpace('t1~def'), model: second.model }],
    };
    const r = new HybridRetrieval(
      new QueryEmbedder({ main, mainName: 'all-MiniLM-L6-v2', extra: [second] }, null),
      vectors,
      lexical,
      { knowledgeBaseSpaces: async (_t, ids) => recorded[ids[0]!]! },
      DEFAULT_SEARCH_TUNING,
    );
    const onMain = searchRequestSchema.parse({
      query: 'sail rigging',
      knowledgeBaseIds: ['kbMain'],
    });
    const onOther = searchRequestSchema.parse({
      query: 'sail rigging',
      knowledgeBaseIds: ['kbOther'],
    });
    // Nothing known yet: the spaces are read first.
    expect(r.embedEarly(tenant, onMain)).toBeUndefined();
    await r.spacesFor(tenant, ['kbMain']);
    await r.spacesFor(tenant, ['kbOther']);
    const early = r.embedEarly(tenant, onMain);
    expect(early).toBeDefined();
    expect(r.embedEarly(tenant, onOther)).toBeUndefined();
    expect(r.embedEarly(toTenantId('t2'), onMain)).toBeUndefined();
    // Used for the main model's space, and only there.
    const { bySpace } = await r.retrieve(recorded['kbMain']!, onMain, {}, 100, early);
    expect(bySpace[0]!.hits).toHaveLength(1);
    expect(embed).toHaveBeenCalledTimes(1);
    const secondEmbed = jest.spyOn(second, 'embed');
    await r.retrieve(recorded['kbOther']!, onOther, {}, 100, early);
    expect(secondEmbed).toHaveBeenCalledTimes(1);
    expect(embed).toHaveBeenCalledTimes(1);
    secondEmbed.mockRestore();
  });

  it('reports an early embedding that failed as a vector search outage, BM25 still answering', async () => {
    const { vectors, lexical } = fakeIndexes({ lexical: [newMatch(2, 3)] });
    const main = new TestEmbeddingProvider();
    jest.spyOn(main, 'embed').mockRejectedValue(new Error('model crashed'));
    const only = new HybridRetrieval(
      new QueryEmbedder({ main, mainName: 'all-MiniLM-L6-v2', extra: [] }, null),
      vectors,
      lexical,
      { knowledgeBaseSpaces: async () => own },
      DEFAULT_SEARCH_TUNING,
    );
    const request = searchRequestSchema.parse({ query: 'q' });
    const embedded = only.embedEarly(tenant, request);
    const { bySpace, degradedReason } = await only.retrieve(own, request, {}, 100, embedded);
    expect(degradedReason).toBe('vector_search_unavailable');
    expect(bySpace[0]!.hits.map((h) => h.chunkIndex)).toEqual([2]);
  });

  it('lists the spaces of the knowledge bases, or the tenant’s own when they cannot be read', async () => {
    const { vectors, lexical } = fakeIndexes();
    const embedder = new QueryEmbedder({ main: second, mainName: 'x', extra: [] }, null);
    const recorded = [{ space: toIndexSpace('t1~abc'), model: second.model }];
    const reader = (fail: boolean): IndexSpaceReader => ({
      knowledgeBaseSpaces: async () => {
        if (fail) throw new Error('postgres down');
        return recorded;
      },
    });
    const of = (fail: boolean) =>
      new HybridRetrieval(
        embedder,
        vectors,
        lexical,
        reader(fail),
        DEFAULT_SEARCH_TUNING,
      ).spacesFor(tenant, ['kb1']);
    expect(await of(false)).toEqual(recorded);
    expect(await of(true)).toEqual([{ space: toIndexSpace('t1'), model: undefined }]);
  });

  describe('pseudo-relevance feedback (RM3)', () => {
    // First pass: semantic ranks chunks 1 and 2, BM25 ranks 3 then 1. The second BM25 pass (with
    // the expansion) finds chunk 4, which shares the feedback hits' terms but not the query's.
    function withFeedback(
      feedback: 'rm3' | 'none' | undefined,
      options: { vectorDown?: boolean; secondPassFails?: boolean } = {},
    ) {
      const { vectors, lexical, calls } = fakeIndexes({
        vector: [newMatch(1, 0.9), newMatch(2, 0.8), newMatch(5, 0.1)],
        lexical: [newMatch(3, 5), newMatch(1, 1)],
        down: { vector: options.vectorDown },
      });
      const terms: Record<number, Record<string, number>> = {
        1: { catalog: 3, librari: 1 },
        2: { catalog: 1, index: 1 },
        3: { librari: 2 },
      };
      const termVectorCalls: string[][] = [];
      const withTerms = {
        ...lexical,
        search: async (space: never, query: Parameters<typeof lexical.search>[1]) => {
          if (!query.expansion) {
            const found = await lexical.search(space, query);
            // As the index does: no texts when none are asked for.
            return query.withText === false
              ? found.map((match) => ({ ...match, title: '', text: '' }))
              : found;
          }
          calls.search.push({ space, query });
          if (options.secondPassFails) throw new Error('postgres down');
          return [newMatch(4, 7), newMatch(1, 2)];
        },
        termVectors: async (_space: unknown, chunks: Array<{ chunkIndex: number }>) => {
          termVectorCalls.push(chunks.map((c) => String(c.chunkIndex)));
          return new Map(
            chunks.flatMap((c) => {
              const t = terms[c.chunkIndex];
              if (!t) return [];
              const entries = Object.entries(t);
              return [
                [
                  `d1#1#${c.chunkIndex}`,
                  { length: entries.reduce((n, [, tf]) => n + tf, 0), terms: new Map(entries) },
                ] as const,
              ];
            }),
          );
        },
      };
      const embedder = new QueryEmbedder(
        { main: new TestEmbeddingProvider(), mainName: 'all-MiniLM-L6-v2', extra: [] },
        null,
      );
      const tuning = { ...DEFAULT_SEARCH_TUNING, feedback };
      const r = new HybridRetrieval(
        embedder,
        vectors,
        withTerms,
        { knowledgeBaseSpaces: async () => own },
        tuning,
      );
      return { r, calls, termVectorCalls };
    }

    it('searches the lexical side again with the best hits\u2019 terms by default, and fuses that', async () => {
      const { r, calls, termVectorCalls } = withFeedback(undefined);
      const { bySpace } = await r.retrieve(own, searchRequestSchema.parse({ query: 'q' }), {}, 100);
      const hits = bySpace[0]!.hits;
      // The feedback is the first fusion's hits (all five here, fewer than RM3.documents).
      expect(termVectorCalls).toHaveLength(1);
      expect(termVectorCalls[0]!.sort()).toEqual(['1', '2', '3', '5']);
      expect(calls.search).toHaveLength(2);
      const expansion = calls.search[1]!.query.expansion!;
      expect(expansion.queryWeight).toBe(0.7);
      expect(expansion.terms.map((t) => t.lexeme).sort()).toEqual(['catalog', 'index', 'librari']);
      const total = expansion.terms.reduce((sum, t) => sum + t.weight, 0);
      expect(total).toBeCloseTo(0.3, 10);
      expect(calls.search[1]!.query.text).toBe('q');
      expect(calls.search[1]!.query.topK).toBe(100);
      // The second pass replaced the first lexical list: chunk 4 is found, chunk 3 is not.
      expect(order(hits)).toContain(4);
      expect(order(hits)).not.toContain(3);
      // The first pass only ranked, so its texts were not read; the second pass's were.
      expect(calls.search[0]!.query.withText).toBe(false);
      expect(calls.search[1]!.query.withText).toBeUndefined();
      expect(hits.every((hit) => hit.text === `chunk ${hit.chunkIndex}`)).toBe(true);
    });

    it("tells the listener the first fusion's documents before the second pass, and only then", async () => {
      const told: Array<{ ids: string[]; secondPasses: number }> = [];
      const retrieveTelling = (feedback: 'rm3' | 'none' | undefined, topK: number) => {
        const { r, calls } = withFeedback(feedback);
        const listener = (ids: string[]) =>
          told.push({ ids, secondPasses: calls.search.filter((c) => c.query.expansion).length });
        const request = searchRequestSchema.parse({ query: 'q', topK, fusion: 'rrf' });
        return r.retrieve(own, request, {}, 100, undefined, undefined, listener);
      };
      await retrieveTelling(undefined, 2);
      // The page's window of the first fusion (every chunk here is of d1), before RM3's pass.
      expect(told).toEqual([{ ids: ['d1', 'd1'], secondPasses: 0 }]);
      // No feedback: the fusion is final at once, so nothing is read ahead.
      await retrieveTelling('none', 2);
      expect(told).toHaveLength(1);
    });

    it('reads the first pass again with its texts when feedback does not replace it', async () => {
      for (const options of [{ vectorDown: true }, { secondPassFails: true }]) {
        const { r, calls } = withFeedback(undefined, options);
        const { bySpace } = await r.retrieve(
          own,
          searchRequestSchema.parse({ query: 'q' }),
          {},
          100,
        );
        const hits = bySpace[0]!.hits;
        expect(order(hits)).toContain(3);
        expect(hits.every((hit) => hit.text === `chunk ${hit.chunkIndex}`)).toBe(true);
        const lastSearch = calls.search[calls.search.length - 1]!.query;
        expect(lastSearch.withText).toBeUndefined();
        expect(lastSearch.expansion).toBeUndefined();
      }
    });

    it('keeps the first pass with PSEUDO_RELEVANCE_FEEDBACK=none, and in a single mode', async () => {
      const off = withFeedback('none');
      const { bySpace } = await off.r.retrieve(
        own,
        searchRequestSchema.parse({ query: 'q' }),
        {},
        100,
      );
      expect(off.calls.search).toHaveLength(1);
      expect(off.termVectorCalls).toHaveLength(0);
      expect(order(bySpace[0]!.hits)).toContain(3);
      expect(order(bySpace[0]!.hits)).not.toContain(4);
      const lexicalOnly = withFeedback('rm3');
      await lexicalOnly.r.retrieve(
        own,
        searchRequestSchema.parse({ query: 'q', mode: 'lexical' }),
        {},
        100,
      );
      expect(lexicalOnly.calls.search).toHaveLength(1);
      expect(lexicalOnly.termVectorCalls).toHaveLength(0);
    });
  });
});

describe('HybridRetrieval: the semantic candidates\u2019 texts', () => {
  const vectorQueries: VectorQuery[] = [];
  /** The vector store answering as pgvector does without texts: empty titles and texts. */
  const store = {
    query: async (_space: string, query: VectorQuery) => {
      vectorQueries.push(query);
      const texted = query.withText !== false;
      return [newMatch(1, 0.9), newMatch(2, 0.8), newMatch(3, 0.7)].map((m) =>
        texted ? m : { ...m, title: '', text: '' },
      );
    },
  };
  const search = async () => [newMatch(4, 2)];
  const request = searchRequestSchema.parse({ query: 'sail rigging' });
  const make = (texts: (space: string, chunks: ChunkRef[]) => Promise<Map<string, ChunkText>>) =>
    new HybridRetrieval(
      new QueryEmbedder({ main: new TestEmbeddingProvider(), mainName: 'm', extra: [] }, null),
      store,
      { search, texts },
      { knowledgeBaseSpaces: async () => own },
      { ...DEFAULT_SEARCH_TUNING, feedback: 'none' },
    );

  beforeEach(() => {
    vectorQueries.length = 0;
  });

  it('reads them from the lexical index, asking the vector store for none, and leaves out chunks it does not hold', async () => {
    const asked: ChunkRef[][] = [];
    const r = make(async (_space, chunks) => {
      asked.push(chunks);
      // Chunk 3 is not (yet, or no longer) in the lexical index.
      return new Map(
        chunks
          .filter((c) => c.chunkIndex !== 3)
          .map((c) => [
            `d1#1#${c.chunkIndex}`,
            { title: 'T', text: `lexical text ${c.chunkIndex}` },
          ]),
      );
    });
    const { bySpace } = await r.retrieve(own, request, {}, 100);
    expect(vectorQueries.map((q) => q.withText)).toEqual([false]);
    expect(asked.map((chunks) => chunks.map((c) => c.chunkIndex))).toEqual([[1, 2, 3]]);
    const semantic = bySpace[0]!.hits.filter((h) => h.strategies.includes('semantic'));
    expect(semantic.map((h) => [h.chunkIndex, h.title, h.text])).toEqual([
      [1, 'T', 'lexical text 1'],
      [2, 'T', 'lexical text 2'],
    ]);
  });

  it('reads them from the vector store after all when the lexical index cannot answer', async () => {
    const r = make(async () => {
      throw new Error('postgres down');
    });
    const { bySpace, degradedReason } = await r.retrieve(own, request, {}, 100);
    expect(vectorQueries.map((q) => q.withText)).toEqual([false, undefined]);
    expect(degradedReason).toBeUndefined();
    const semantic = bySpace[0]!.hits.filter((h) => h.strategies.includes('semantic'));
    expect(semantic.map((h) => [h.chunkIndex, h.text])).toEqual([
      [1, 'chunk 1'],
      [2, 'chunk 2'],
      [3, 'chunk 3'],
    ]);
  });

  it('asks for the texts when semantic search answers alone', async () => {
    const r = make(async () => new Map());
    await r.retrieve(own, searchRequestSchema.parse({ query: 'q', mode: 'semantic' }), {}, 100);
    expect(vectorQueries.map((q) => q.withText)).toEqual([undefined]);
  });
});
