import type { Reranker } from '../search/cross-encoder.reranker';
import { RerankErrorCode } from './rerank.errors';
import { type RerankRequest, rerankRequestSchema } from './rerank.model';
import { RerankService } from './rerank.service';

/** Scores a passage by how many of the query's words it holds; can be made to fail. */
function wordReranker(fail = false): Reranker & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    model: 'fake-cross-encoder',
    msPerPair: 1,
    calls,
    async score(query, passages) {
      calls.push(passages);
      if (fail) throw new Error('onnxruntime: out of memory');
      const words = query.toLowerCase().split(/\W+/);
      return passages.map(
        (p) =>
          p
            .toLowerCase()
            .split(/\W+/)
            .filter((w) => words.includes(w)).length,
      );
    },
    close: async () => undefined,
  };
}

const request = (body: Record<string, unknown>): RerankRequest =>
  rerankRequestSchema.parse({ query: 'lighthouse keeper', ...body });
const DOCUMENTS = [
  'The harbour has a long pier.',
  { text: 'A lighthouse keeper lived here.' },
  'The lighthouse is white.',
  'Bees and their keeper.',
];

describe('RerankService', () => {
  it('orders the documents by score, best first, with their request index and rank', async () => {
    const response = await new RerankService(wordReranker()).rerank(
      request({ documents: DOCUMENTS }),
    );
    expect(response).toEqual({
      model: 'fake-cross-encoder',
      reranked: true,
      results: [
        { index: 1, relevance_score: 2, original_rank: 2 },
        // A tie keeps the request's order.
        { index: 2, relevance_score: 1, original_rank: 3 },
        { index: 3, relevance_score: 1, original_rank: 4 },
        { index: 0, relevance_score: 0, original_rank: 1 },
      ],
    });
  });

  it('returns the best top_k, with their text when asked', async () => {
    const response = await new RerankService(wordReranker()).rerank(
      request({ documents: DOCUMENTS, top_k: 2, return_documents: true }),
    );
    expect(response.results).toEqual([
      {
        index: 1,
        relevance_score: 2,
        original_rank: 2,
        document: { text: 'A lighthouse keeper lived here.' },
      },
      {
        index: 2,
        relevance_score: 1,
        original_rank: 3,
        document: { text: 'The lighthouse is white.' },
      },
    ]);
  });

  it("takes Cohere's top_n as top_k", async () => {
    const response = await new RerankService(wordReranker()).rerank(
      request({ documents: DOCUMENTS, top_n: 1 }),
    );
    expect(response.results).toEqual([{ index: 1, relevance_score: 2, original_rank: 2 }]);
  });

  it('answers no results for no documents, without calling the model', async () => {
    const reranker = wordReranker();
    expect(await new RerankService(reranker).rerank(request({ documents: [] }))).toEqual({
      model: 'fake-cross-encoder',
      reranked: true,
      results: [],
    });
    expect(reranker.calls).toEqual([]);
  });

  it('keeps the request order when the model fails, and says so', async () => {
    const response = await new RerankService(wordReranker(true)).rerank(
      request({ documents: DOCUMENTS, top_k: 3 }),
    );
    expect(response).toEqual({
      model: 'fake-cross-encoder',
      reranked: false,
      reason: 'reranker_failed',
      results: [0, 1, 2].map((index) => ({
        index,
        relevance_score: null,
        original_rank: index + 1,
      })),
    });
  });

  it('is unavailable (503 cross_encoder_not_loaded) without a cross-encoder', async () => {
    await expect(
      new RerankService(null).rerank(request({ documents: DOCUMENTS })),
    ).rejects.toMatchObject({ code: RerankErrorCode.NoCrossEncoder, kind: 'unavailable' });
  });

  it('refuses a model other than the one loaded', async () => {
    await expect(
      new RerankService(wordReranker()).rerank(
        request({ documents: DOCUMENTS, model: 'rerank-english-v3.0' }),
      ),
    ).rejects.toMatchObject({ code: RerankErrorCode.ModelNotServed, kind: 'invalid_argument' });
  });
});
