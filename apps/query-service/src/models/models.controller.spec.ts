import { TestEmbeddingProvider } from '@kb/embeddings';

import type { Reranker } from '../search/cross-encoder.reranker';
import { QueryEmbedder } from '../search/query.embedder';
import { ModelsController } from './models.controller';

describe('query-service GET /v1/models', () => {
  const main = new TestEmbeddingProvider(384);
  const embedder = new QueryEmbedder(
    { main, mainName: 'all-MiniLM-L6-v2', extra: [new TestEmbeddingProvider(64)] },
    null,
  );
  const reranker: Reranker = {
    model: 'ms-marco-MiniLM-L-6-v2',
    msPerPair: 1,
    score: async () => [],
    close: async () => undefined,
  };

  it('lists the embedding models and the loaded cross-encoder in OpenAI shape, with its state', () => {
    const list = new ModelsController(embedder, reranker).list();
    expect(list).toEqual({
      object: 'list',
      data: [
        expect.objectContaining({
          id: 'all-MiniLM-L6-v2',
          object: 'model',
          kind: 'embedding',
          dimension: 384,
        }),
        expect.objectContaining({ id: 'test-hashing-384', kind: 'embedding', dimension: 384 }),
        expect.objectContaining({ id: 'test-hashing-64', kind: 'embedding', dimension: 64 }),
        expect.objectContaining({
          id: 'ms-marco-MiniLM-L-6-v2',
          object: 'model',
          kind: 'cross-encoder',
        }),
      ],
      cross_encoder: { configured: true, loaded: true, model: 'ms-marco-MiniLM-L-6-v2' },
    });
  });

  it('says no cross-encoder is configured when there is none', () => {
    const list = new ModelsController(embedder, null).list();
    expect(list.data.map((m) => m.kind)).toEqual(['embedding', 'embedding', 'embedding']);
    expect(list.cross_encoder).toEqual({ configured: false, loaded: false, model: null });
  });
});
