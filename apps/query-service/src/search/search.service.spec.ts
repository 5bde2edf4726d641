import { toTenantId } from '@kb/contracts';
import { TestEmbeddingProvider } from '@kb/embeddings';
import type { LexicalIndex, LexicalMatch } from '@kb/lexical-index';
import type { VectorMatch, VectorStore } from '@kb/vector-store';
import { SearchError } from './search.errors';
import { searchRequestSchema } from './search.model';
import { SearchService } from './search.service';

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
) {
  const vectors = {
    query: async () => {
      if (fail.vector) throw new Error('vector store down');
      return vector;
    },
  } as unknown as VectorStore;
  const lexicalIndex = {
    search: async () => {
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
    new TestEmbeddingProvider(),
    vectors,
    lexicalIndex,
    { current: async () => 0 },
    null,
  );
}

const tenant = toTenantId('t1');
const request = (
  mode: 'hybrid' | 'semantic' | 'lexical',
  topK = 10,
  fusion: 'rrf' | 'convex' = 'rrf',
) => searchRequestSchema.parse({ query: 'q', topK, mode, fusion });

describe('SearchService', () => {
  it('fuses with a convex combination by default', async () => {
    const service = fakes(
      [match(1, 0.9), match(2, 0.8), match(5, 0.1)],
      [match(2, 3), match(3, 2), match(4, 1)],
    );
    const response = await service.search(tenant, searchRequestSchema.parse({ query: 'q' }));
    // semantic 1 → 1, 2 → .875, 5 → 0; lexical 2 → 1, 3 → .5, 4 → 0
    expect(response.hits.map((h) => h.chunkIndex)).toEqual([2, 1, 3, 5, 4]);
    expect(response.hits[0]!.score).toBeCloseTo(0.9375, 12);
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
      status: 503,
      code: 'search_unavailable',
    });
    await expect(
      fakes([], [], { vector: true }).search(tenant, request('semantic')),
    ).rejects.toBeInstanceOf(SearchError);
  });
});
