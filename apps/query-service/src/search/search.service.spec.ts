import { activeOnly, type FilterNode, toIndexSpace, toTenantId } from '@kb/contracts';
import { TestEmbeddingProvider } from '@kb/embeddings';

import {
  fakeDocuments,
  fakeIndexes,
  type IndexContents,
  memoryCache,
  newHit,
  newMatch,
} from '../../test/support/search.fakes';
import { DocumentDetailsCache } from '../documents/document-details.cache';
import type { Reranker } from './cross-encoder.reranker';
import { HybridRetrieval, type SpaceToSearch } from './hybrid.retrieval';
import { QueryEmbedder } from './query.embedder';
import { SearchError } from './search.errors';
import {
  DEFAULT_SEARCH_TUNING,
  type SearchRequestInput,
  searchRequestSchema,
} from './search.model';
import { mergeSpaces, SearchService } from './search.service';
import { SearchResultCache } from './search-result.cache';
import { DiversifyStep } from './steps/diversify.step';
import { HitDetailsStep } from './steps/hit-details.step';
import { NeighborsStep } from './steps/neighbors.step';
import { RerankStep } from './steps/rerank.step';

interface Setup extends IndexContents {
  reranker?: Reranker;
  /** document-service is unreachable. */
  documentsDown?: boolean;
  /** The index spaces of the knowledge bases searched; default: the tenant's own. */
  spaces?: SpaceToSearch[];
  /** The lexical index gives term vectors, so RM3's second pass runs. */
  feedback?: boolean;
}

const second = new TestEmbeddingProvider(8);
const TERMS = new Map([['catalog', 1]]);

/** The service with every real step, over in-memory indexes and no Redis. */
function searchService(setup: Setup = {}) {
  const { vectors, lexical: plain, calls } = fakeIndexes(setup);
  const lexical = setup.feedback
    ? { ...plain, termVectors: async () => new Map([['d1#1#0', { length: 1, terms: TERMS }]]) }
    : plain;
  const documents = fakeDocuments(undefined, { down: setup.documentsDown });
  const index = {
    current: async () => 1,
    knowledgeBaseSpaces: async (tenantId: string) =>
      setup.spaces ?? [{ space: toIndexSpace(tenantId), model: undefined }],
  };
  const tuning = DEFAULT_SEARCH_TUNING;
  const embedder = new QueryEmbedder(
    { main: new TestEmbeddingProvider(), mainName: 'all-MiniLM-L6-v2', extra: [second] },
    null,
  );
  const service = new SearchService(
    new SearchResultCache(null, index, tuning),
    new HybridRetrieval(embedder, vectors, lexical, index, tuning),
    new RerankStep(setup.reranker ?? null, tuning),
    new DiversifyStep(vectors),
    new NeighborsStep(lexical),
    new HitDetailsStep(lexical, documents.reader, new DocumentDetailsCache(0)),
  );
  return { service, calls, lexical, reads: documents.reads, documentCalls: documents.calls };
}

const tenant = toTenantId('t1');
const search = (setup: Setup, input: Partial<SearchRequestInput> = {}) =>
  searchService(setup).service.search(tenant, searchRequestSchema.parse({ query: 'q', ...input }));
const order = (hits: Array<{ chunkIndex: number }>) => hits.map((h) => h.chunkIndex);

describe('SearchService', () => {
  it('answers with the fused hits and what each step did', async () => {
    const response = await search(
      { vector: [newMatch(1, 0.9), newMatch(2, 0.8)], lexical: [newMatch(2, 3), newMatch(3, 2)] },
      { fusion: 'rrf' },
    );
    expect(order(response.hits)).toEqual([2, 1, 3]);
    expect(response).toMatchObject({
      mode: 'hybrid',
      cache: 'off', // no Redis
      confidence: 'high',
      rerank: 'off',
      mmr: 'off',
      degraded: false,
    });
    expect(response).not.toHaveProperty('nextOffset');
    expect(response).not.toHaveProperty('degradedReason');
    expect(response.tookMs).toBeGreaterThanOrEqual(0);
  });

  it('cuts to topK after fusion', async () => {
    const response = await search(
      { vector: [newMatch(1, 0.9), newMatch(2, 0.8)], lexical: [newMatch(3, 3), newMatch(4, 2)] },
      { topK: 2 },
    );
    expect(response.hits).toHaveLength(2);
  });

  it('labels confidence by agreement of the strategies', async () => {
    // Convex: 1 and 3 tie at 0.5 on one strategy each; 2, found by both, normalizes to 0 in both.
    const partly = await search({
      vector: [newMatch(1, 0.9), newMatch(2, 0.1)],
      lexical: [newMatch(3, 3), newMatch(2, 1)],
    });
    expect(partly.confidence).toBe('medium');
    const none = await search({ vector: [newMatch(1, 0.9)], lexical: [newMatch(3, 3)] });
    expect(none.confidence).toBe('low');
  });

  it('says when it answered degraded, and answers 503 when nothing can serve the request', async () => {
    const noVectors = await search({ lexical: [newMatch(3, 2)], down: { vector: true } });
    expect(noVectors).toMatchObject({
      degraded: true,
      degradedReason: 'vector_search_unavailable',
    });
    expect(order(noVectors.hits)).toEqual([3]);
    await expect(search({ down: { vector: true, lexical: true } })).rejects.toMatchObject({
      kind: 'unavailable',
      code: 'search_unavailable',
    });
    await expect(search({ down: { vector: true } }, { mode: 'semantic' })).rejects.toBeInstanceOf(
      SearchError,
    );
  });

  it('pages through results with offset and nextOffset, asking each strategy for enough', async () => {
    const many = Array.from({ length: 7 }, (_, i) => newMatch(i, 1 - i / 10));
    const { service, calls } = searchService({ vector: many });
    const page = (offset: number) =>
      service.search(
        tenant,
        searchRequestSchema.parse({ query: 'q', mode: 'semantic', topK: 3, offset }),
      );
    const first = await page(0);
    expect(order(first.hits)).toEqual([0, 1, 2]);
    expect(first.nextOffset).toBe(3);
    const last = await page(6);
    expect(order(last.hits)).toEqual([6]);
    expect(last.nextOffset).toBeUndefined();
    expect(calls.query.map((c) => c.query.topK)).toEqual([3, 9]);
  });

  it('counts the ranked hits, exactly unless a strategy filled its candidate list', async () => {
    const exact = await search(
      { vector: [newMatch(1, 0.9), newMatch(2, 0.8)], lexical: [newMatch(2, 3)] },
      { topK: 1 },
    );
    expect(exact).toMatchObject({ total: 2, totalRelation: 'eq', nextOffset: 1 });
    const many = Array.from({ length: 3 }, (_, i) => newMatch(i, 1 - i / 10));
    // Semantic alone asks for offset + topK = 3 candidates and gets 3: more may match.
    const bound = await search({ vector: many }, { mode: 'semantic', topK: 3 });
    expect(bound).toMatchObject({ total: 3, totalRelation: 'gte' });
  });

  it('under mode auto, leans the fusion toward the strategy that suits the query type', async () => {
    // Chunk 1 is the best semantic match, chunk 2 the best lexical one; each is found by both.
    const contents = {
      vector: [newMatch(1, 0.9), newMatch(2, 0.6), newMatch(3, 0.1)],
      lexical: [newMatch(2, 9), newMatch(1, 5), newMatch(3, 1)],
    };
    const identifier = await search(contents, { mode: 'auto', query: 'kb_search_results' });
    expect(identifier).toMatchObject({ mode: 'auto', queryType: 'identifier' });
    expect(order(identifier.hits)[0]).toBe(2);
    const question = await search(contents, { mode: 'auto', query: 'how are results counted?' });
    expect(question).toMatchObject({ mode: 'auto', queryType: 'question' });
    expect(order(question.hits)[0]).toBe(1);
    // Hybrid names the type but keeps the deployment's α whatever it is.
    const hybrid = await search(contents, { query: 'kb_search_results' });
    expect(hybrid).toMatchObject({ mode: 'hybrid', queryType: 'identifier' });
    expect(order(hybrid.hits)[0]).toBe(1);
  });

  it('asks for enough candidates to fuse, and for MMR to choose among', async () => {
    const { service, calls } = searchService({ vector: [newMatch(1, 0.9)] });
    const ask = (input: Omit<SearchRequestInput, 'query'>) =>
      service.search(tenant, searchRequestSchema.parse({ query: 'q', ...input }));
    await ask({ mode: 'hybrid' });
    await ask({ mode: 'semantic', mmr: true });
    expect(calls.query.map((c) => c.query.topK)).toEqual([100, 50]);
  });

  it('passes the parsed filter, the knowledge bases and the principals to both strategies', async () => {
    const { service, calls } = searchService({ vector: [newMatch(1, 0.9)] });
    await service.search(
      tenant,
      searchRequestSchema.parse({
        query: 'q',
        knowledgeBaseIds: ['kb1'],
        filter: { tags: 'finance' },
      }),
      ['user:a'],
    );
    const filter = { kind: 'compare', field: { kind: 'tags' }, operator: '$eq', value: 'finance' };
    // Inactive documents are kept out of every search (ADR 25).
    const scope = {
      filter: activeOnly(filter as FilterNode),
      knowledgeBaseIds: ['kb1'],
      principals: ['user:a'],
    };
    expect(calls.query[0]!.query).toMatchObject(scope);
    expect(calls.search[0]!.query).toMatchObject({ text: 'q', ...scope });
  });

  it('never returns two versions of a document, even while an index holds both', async () => {
    const v = (version: number, chunkIndex: number, score: number) =>
      newMatch(chunkIndex, score, { documentVersion: version });
    const response = await search({
      vector: [v(1, 0, 0.9), v(2, 0, 0.8), v(1, 1, 0.7)],
      lexical: [v(1, 1, 3), v(2, 1, 2)],
    });
    expect(response.hits.map((h) => [h.documentVersion, h.chunkIndex])).toEqual(
      expect.arrayContaining([
        [2, 0],
        [2, 1],
      ]),
    );
    expect(response.hits.every((h) => h.documentVersion === 2)).toBe(true);
  });

  it('reports rerank as applied or skipped with its reason', async () => {
    const reranker: Reranker = {
      model: 'fake-cross-encoder',
      msPerPair: 1,
      // Reverses the order: the last passage scores highest.
      score: async (_query, passages) => passages.map((_, i) => i),
      close: async () => undefined,
    };
    const contents = { vector: [newMatch(1, 0.9), newMatch(2, 0.8)] };
    const applied = await search({ ...contents, reranker }, { mode: 'semantic', rerank: true });
    expect(applied.rerank).toBe('applied');
    // The default fusion (k 60, model share 0.3) scores by both orders; a light share keeps the first.
    expect(applied.hits.map((h) => [h.chunkIndex, h.score])).toEqual([
      [1, 0.7 / 61 + 0.3 / 62],
      [2, 0.7 / 62 + 0.3 / 61],
    ]);
    const noModel = await search(contents, { mode: 'semantic', rerank: true });
    expect(noModel.rerank).toBe('skipped: no_reranker_model');
    expect(order(noModel.hits)).toEqual([1, 2]);
  });

  it('reports MMR as applied or skipped with its reason', async () => {
    const hits = [newMatch(0, 0.9), newMatch(1, 0.85), newMatch(2, 0.5)];
    const stored = { 0: [1, 0], 1: [0.99, 0.14], 2: [0, 1] };
    const diverse = await search({ vector: hits, stored }, { mode: 'semantic', mmr: true });
    expect(diverse.mmr).toBe('applied');
    expect(order(diverse.hits)).toEqual([0, 2, 1]);
    const lexicalOnly = await search(
      { lexical: hits, stored, down: { vector: true } },
      { mmr: true },
    );
    expect(lexicalOnly.mmr).toBe('skipped: vector_search_unavailable');
    expect(order(lexicalOnly.hits)).toEqual([0, 1, 2]);
  });

  it('adds neighbours to the page, read in the space of each hit', async () => {
    const { service, calls } = searchService({
      vector: [newMatch(0, 0.9), newMatch(3, 0.5)],
      spaces: [{ space: toIndexSpace('t1~abc'), model: second.model }],
    });
    const response = await service.search(
      tenant,
      searchRequestSchema.parse({ query: 'q', mode: 'semantic', neighbors: 1, topK: 1 }),
    );
    // The page is hit 0; chunk 1 is its neighbour. Hit 3 is on no page asked for.
    expect(response.hits.map((h) => [h.chunkIndex, h.isMatch])).toEqual([
      [0, true],
      [1, false],
    ]);
    expect(response.confidence).toBe('low');
    expect(response.nextOffset).toBe(1);
    expect(calls.chunksAround.map((c) => c.space)).toEqual(['t1~abc']);
  });

  describe('hit details', () => {
    const caller = { tenantId: tenant, userId: 'ann', roles: [], groups: [], token: 'tok' };
    const contents = {
      vector: [newMatch(0, 0.9), newMatch(1, 0.8, { documentId: 'gone' })],
    };

    it("adds each hit's location and its document's fields, read with the caller's token", async () => {
      const { service, reads } = searchService(contents);
      const response = await service.search(
        tenant,
        searchRequestSchema.parse({ query: 'q', mode: 'semantic', neighbors: 1, topK: 1 }),
        undefined,
        caller,
      );
      expect(response.details).toBe('applied');
      // The hit and its neighbour alike; the document was read once.
      expect(response.hits).toEqual([
        expect.objectContaining({ chunkIndex: 0, isMatch: true, page: 1, headingPath: ['Intro'] }),
        expect.objectContaining({ chunkIndex: 1, isMatch: false, page: 2 }),
      ]);
      expect(response.hits[0]).toMatchObject({
        tags: ['guide'],
        metadata: { team: 'search' },
        contentType: 'text/markdown',
        filename: 'd1.md',
        createdAt: '2026-11-01T00:00:00.000Z',
        updatedAt: '2026-11-02T00:00:00.000Z',
      });
      expect(reads).toEqual([{ token: 'tok', id: 'd1' }]);
    });

    it("reads the page's documents while RM3 runs, once", async () => {
      const setup = searchService({
        feedback: true,
        vector: [newMatch(0, 0.9)],
        lexical: [newMatch(1, 3, { documentId: 'gone' })],
      });
      let readsBeforeSecondPass: string[] | undefined;
      const search = setup.lexical.search;
      setup.lexical.search = async (space, query) => {
        if (query.expansion) readsBeforeSecondPass = setup.reads.map((r) => r.id).sort();
        return search(space, query);
      };
      const response = await setup.service.search(
        tenant,
        searchRequestSchema.parse({ query: 'q' }),
        undefined,
        caller,
      );
      // Both documents of the first fusion were asked for before the second pass, and not again.
      expect(readsBeforeSecondPass).toEqual(['d1', 'gone']);
      expect(setup.documentCalls).toEqual({ get: 0, getMany: 1 });
      expect(response.hits.map((hit) => hit.documentId)).toEqual(['d1']);
      expect(response.details).toBe('applied');
    });

    it('drops the hits of a document deleted since it was indexed, and says skipped when document-service fails', async () => {
      const setup = searchService(contents);
      const gone = await setup.service.search(
        tenant,
        searchRequestSchema.parse({ query: 'q', mode: 'semantic' }),
        undefined,
        caller,
      );
      expect(gone.details).toBe('applied');
      // Both hits' documents in one call to document-service, not one call each.
      expect(setup.documentCalls).toEqual({ get: 0, getMany: 1 });
      expect(setup.reads.map((r) => r.id).sort()).toEqual(['d1', 'gone']);
      // Its chunks are still in the index (the cleanup trails the delete); the listing lacks it.
      expect(gone.hits.map((hit) => hit.documentId)).toEqual(['d1']);
      expect(gone.total).toBe(1);
      const down = await searchService({ ...contents, documentsDown: true }).service.search(
        tenant,
        searchRequestSchema.parse({ query: 'q', mode: 'semantic' }),
        undefined,
        caller,
      );
      expect(down.details).toBe('skipped: documents_unavailable');
      expect(down.hits[0]).not.toHaveProperty('tags');
      // Without a caller (an internal search), locations only, and nothing is read.
      const { service, reads } = searchService(contents);
      const internal = await service.search(
        tenant,
        searchRequestSchema.parse({ query: 'q', mode: 'semantic' }),
      );
      expect(internal.details).toBe('applied');
      expect(internal.hits[0]).toMatchObject({ page: 1 });
      expect(reads).toEqual([]);
    });
  });

  describe('index spaces (one per pipeline)', () => {
    it('searches each space with its own model and merges the fused lists', async () => {
      const { service, calls } = searchService({
        vector: [newMatch(1, 0.9)],
        lexical: [newMatch(1, 3)],
        spaces: [
          { space: toIndexSpace('t1'), model: undefined },
          { space: toIndexSpace('t1~abc'), model: second.model },
        ],
      });
      const response = await service.search(
        tenant,
        searchRequestSchema.parse({ query: 'q', knowledgeBaseIds: ['a', 'b'], mmr: true }),
      );
      expect(calls.query.map((c) => c.space).sort()).toEqual(['t1', 't1~abc']);
      expect(calls.search.map((c) => c.space).sort()).toEqual(['t1', 't1~abc']);
      // The second space's query vector comes from its own model (8 dimensions).
      expect(calls.query.map((c) => c.query.vector.length).sort((a, b) => a - b)).toEqual([8, 64]);
      // The same passage found in both spaces comes back once; MMR cannot mix vector spaces.
      expect(response.hits).toHaveLength(1);
      expect(response.mmr).toBe('skipped: several_vector_spaces');
    });

    it('merges by score and keeps one copy of a passage', () => {
      const hit = (documentId: string, start: number, score: number) =>
        newHit(0, score, { documentId, startOffset: start, endOffset: start + 10 });
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
  it("reads a miss's query embedding in the result cache's round trip, never on its own", async () => {
    const { cache, rounds } = memoryCache();
    const get = jest.spyOn(cache, 'get');
    const { vectors, lexical } = fakeIndexes({
      vector: [newMatch(1, 0.9)],
      lexical: [newMatch(1, 2)],
    });
    const index = {
      current: async () => 1,
      knowledgeBaseSpaces: async (tenantId: string) => [
        { space: toIndexSpace(tenantId), model: undefined },
      ],
    };
    const model = new TestEmbeddingProvider();
    const runs = jest.spyOn(model, 'embed');
    const tuning = DEFAULT_SEARCH_TUNING;
    const embedder = new QueryEmbedder({ main: model, mainName: 'm', extra: [] }, cache);
    const service = new SearchService(
      new SearchResultCache(cache, index, tuning),
      new HybridRetrieval(embedder, vectors, lexical, index, tuning),
      new RerankStep(null, tuning),
      new DiversifyStep(vectors),
      new NeighborsStep(lexical),
      new HitDetailsStep(lexical, fakeDocuments().reader, new DocumentDetailsCache(0)),
    );
    const ask = (topK: number) =>
      service.search(tenant, searchRequestSchema.parse({ query: 'sail rigging', topK }));
    expect((await ask(5)).cache).toBe('miss'); // the model runs
    expect((await ask(5)).cache).toBe('hit');
    expect((await ask(7)).cache).toBe('miss'); // another answer, the same query: no model run
    expect(runs).toHaveBeenCalledTimes(1);
    expect(get).not.toHaveBeenCalled();
    expect(rounds.lookups).toBe(3);
  });
});
