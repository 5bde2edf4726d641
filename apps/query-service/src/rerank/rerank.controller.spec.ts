import { mintToken, TokenVerifier } from '@kb/auth';
import { useRestDefaults } from '@kb/http';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { RERANKER } from '../platform/tokens';
import type { Reranker } from '../search/cross-encoder.reranker';
import { RerankController } from './rerank.controller';
import { MAX_RERANK_DOCUMENTS } from './rerank.model';
import { RerankService } from './rerank.service';

const SECRET = 'a-secret-for-unit-tests-only-0123456789';
const reranker: Reranker = {
  model: 'fake-cross-encoder',
  score: async (_query, passages) => passages.map((p) => p.length),
  close: async () => undefined,
};

/** POST /v1/rerank over HTTP: the token, the validation at the edge, the status of each outcome. */
describe.each([
  { label: 'with a cross-encoder', loaded: reranker },
  { label: 'without one', loaded: null },
])('POST /v1/rerank $label', ({ loaded }) => {
  let app: INestApplication;
  let url: string;
  let token: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [RerankController],
      providers: [RerankService, { provide: RERANKER, useValue: loaded }],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app, new TokenVerifier({ secret: SECRET }));
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/rerank`;
    token = await mintToken({ tenant: 'acme', user: 'agent' }, SECRET);
  });
  afterAll(() => app.close());

  const post = async (body: unknown, authorization = `Bearer ${token}`) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it.each([
    ['an empty query', { query: '  ', documents: ['a'] }],
    ['no documents field', { query: 'q' }],
    ['too many documents', { query: 'q', documents: Array(MAX_RERANK_DOCUMENTS + 1).fill('a') }],
    ['a document of the wrong type', { query: 'q', documents: [7] }],
    ['top_k 0', { query: 'q', documents: ['a'], top_k: 0 }],
    ['a fractional top_k', { query: 'q', documents: ['a'], top_k: 1.5 }],
    ['top_k as a string', { query: 'q', documents: ['a'], top_k: '2' }],
  ])('answers 400 invalid_argument for %s', async (_label, body) => {
    expect(await post(body)).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_argument' } },
    });
  });

  it('answers 401 without a token', async () => {
    expect((await post({ query: 'q', documents: ['a'] }, '')).status).toBe(401);
  });

  if (loaded) {
    it('answers 200 with the results, best first', async () => {
      expect(await post({ query: 'q', documents: ['a', 'abc', 'ab'], top_k: 2 })).toEqual({
        status: 200,
        body: {
          model: 'fake-cross-encoder',
          reranked: true,
          results: [
            { index: 1, relevance_score: 3, original_rank: 2 },
            { index: 2, relevance_score: 2, original_rank: 3 },
          ],
        },
      });
    });
  } else {
    it('answers 503 cross_encoder_not_loaded to a valid request', async () => {
      expect(await post({ query: 'q', documents: ['a'] })).toMatchObject({
        status: 503,
        body: { error: { code: 'cross_encoder_not_loaded' } },
      });
    });
  }
});
