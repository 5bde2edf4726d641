import {
  type AccessPolicy,
  AuthError,
  AuthErrorCode,
  type Caller,
  mintToken,
  TokenVerifier,
} from '@kb/auth';
import {
  ACCESS_POLICY,
  FlexibleRateLimiter,
  MODEL_API_QUEUE,
  ModelRunQueue,
  RATE_LIMITER,
  TOKEN_VERIFIER,
  useRestDefaults,
} from '@kb/http';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';

import { RERANKER } from '../platform/tokens';
import type { Reranker } from '../search/cross-encoder.reranker';
import { RerankController } from './rerank.controller';
import { MAX_RERANK_DOCUMENTS } from './rerank.model';
import { RerankService } from './rerank.service';

const SECRET = 'a-secret-for-unit-tests-only-0123456789';
const verifier = new TokenVerifier({ secret: SECRET });

/** acl-service as the guard sees it: `outsider` may not read documents, everyone else may. */
const policy: AccessPolicy = {
  accessOf: async () => {
    throw new Error('not asked');
  },
  authorize: async (caller: Caller, { action, resource }) => {
    if (caller.userId === 'outsider') {
      throw new AuthError(
        AuthErrorCode.PermissionDenied,
        `${action} on ${resource} is not granted to ${caller.userId}`,
      );
    }
  },
};

/** What @Authenticated() needs: the verifier, the policy, and a `model` budget per caller. */
const guardProviders = (perCaller: number, queue?: ModelRunQueue) => [
  { provide: TOKEN_VERIFIER, useValue: verifier },
  { provide: ACCESS_POLICY, useValue: policy },
  {
    provide: RATE_LIMITER,
    useValue: new FlexibleRateLimiter(
      { windowSeconds: 60, buckets: { model: { principal: perCaller, tenant: 0 } } },
      null,
    ),
  },
  ...(queue ? [{ provide: MODEL_API_QUEUE, useValue: queue }] : []),
];
const reranker: Reranker = {
  model: 'fake-cross-encoder',
  msPerPair: 1,
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
      providers: [RerankService, { provide: RERANKER, useValue: loaded }, ...guardProviders(100)],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app, verifier);
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
    ['top_k and top_n that differ', { query: 'q', documents: ['a'], top_k: 1, top_n: 2 }],
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

/** The permission, the `model` budget and the queue in front of the cross-encoder (review N5). */
describe('POST /v1/rerank, its permission and limits', () => {
  let app: INestApplication;
  let url: string;
  let release: () => void = () => undefined;
  let running = 0;
  const queue = new ModelRunQueue({ name: 'rerank', concurrency: 1, maxWaiting: 1 });
  /** A cross-encoder whose runs end when the test says so. */
  const slow: Reranker = {
    model: 'fake-cross-encoder',
    msPerPair: 1,
    score: async (_query, passages) => {
      running++;
      await new Promise<void>((resolve) => (release = resolve));
      return passages.map((p) => p.length);
    },
    close: async () => undefined,
  };
  let gated = false;
  const reranker: Reranker = {
    ...slow,
    score: (query, passages) =>
      gated ? slow.score(query, passages) : Promise.resolve(passages.map((p) => p.length)),
  };

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [RerankController],
      providers: [
        RerankService,
        { provide: RERANKER, useValue: reranker },
        ...guardProviders(3, queue),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app, verifier);
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/v1/rerank`;
  });
  afterAll(() => app.close());

  const post = async (user: string) => {
    const token = await mintToken({ tenant: 'acme', user }, SECRET);
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: 'q', documents: ['a', 'ab'] }),
    });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as Record<string, unknown>,
    };
  };

  it('answers 403 permission_denied to a caller who may not read documents', async () => {
    expect(await post('outsider')).toMatchObject({
      status: 403,
      body: {
        error: {
          code: 'permission_denied',
          message: 'read on documents is not granted to outsider',
        },
      },
    });
  });

  it('answers 429 rate_limited once the caller has spent the model budget', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post('busy-bee')).status);
    expect(statuses).toEqual([200, 200, 200]);
    expect(await post('busy-bee')).toMatchObject({
      status: 429,
      retryAfter: expect.stringMatching(/^\d+$/),
      body: {
        error: {
          code: 'rate_limited',
          message: 'too many model calls from this caller; retry later',
        },
      },
    });
    // Another caller has a budget of their own.
    expect((await post('someone-else')).status).toBe(200);
  });

  it('answers 429 model_busy when the queue for the model is full', async () => {
    gated = true;
    const first = post('queue-1'); // runs
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = post('queue-2'); // waits
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(queue.load).toEqual({ running: 1, waiting: 1 });
    expect(await post('queue-3')).toMatchObject({
      status: 429,
      retryAfter: '1',
      body: {
        error: {
          code: 'model_busy',
          message: 'too many rerank requests are waiting for the model; retry shortly',
        },
      },
    });
    gated = false; // the waiting call runs at once when the first ends
    release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect(running).toBe(1);
    expect(queue.load).toEqual({ running: 0, waiting: 0 });
  });
});
