import {
  type AccessPolicy,
  AuthError,
  AuthErrorCode,
  type Caller,
  mintToken,
  TokenVerifier,
} from '@kb/auth';
import { type EmbeddingProvider, TestEmbeddingProvider } from '@kb/embeddings';
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
import OpenAI from 'openai';

import { CachedEmbedder } from '../cache/cached.embedder';
import { EMBEDDING_CONFIG } from '../config/embedding.config';
import { ModelsController } from '../embedding/models.controller';
import { EMBEDDER } from '../platform/tokens';
import { OpenAiController } from './openai.controller';
import { MAX_INPUT_CHARACTERS, MAX_INPUTS } from './openai.model';
import { OpenAiEmbeddingsService } from './openai-embeddings.service';
import { EmbeddingServiceExceptionFilter } from './openai-exception.filter';

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

/**
 * The OpenAI-compatible API driven by OpenAI's own SDK (the `openai` package), over HTTP, with a
 * knowledge-base token as its API key. The model is the FAKE hashing embedder (libs/embeddings),
 * served under two names, as embedding-service serves its main model; batches of 2 make a
 * three-text request take two model calls.
 */
describe('OpenAI-compatible embeddings API', () => {
  let app: INestApplication;
  let baseURL: string;
  let client: OpenAI;
  const model = new TestEmbeddingProvider(384);

  beforeAll(async () => {
    const embedder = new CachedEmbedder(model, null, 2);
    const moduleRef = await Test.createTestingModule({
      controllers: [OpenAiController, ModelsController],
      providers: [
        OpenAiEmbeddingsService,
        { provide: EMBEDDING_CONFIG, useValue: { EMBEDDING_BATCH_SIZE: 2 } },
        {
          provide: EMBEDDER,
          useValue: new Map([
            ['all-MiniLM-L6-v2', embedder],
            [model.model, embedder],
          ]),
        },
        ...guardProviders(1000),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app, verifier, new EmbeddingServiceExceptionFilter());
    await app.listen(0, '127.0.0.1');
    baseURL = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/v1`;
    const apiKey = await mintToken({ tenant: 'acme', user: 'agent' }, SECRET);
    client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  });
  afterAll(() => app.close());

  it('embeds a string input in OpenAI shape, with usage', async () => {
    const response = await client.embeddings.create({
      model: 'all-MiniLM-L6-v2',
      input: 'lighthouse keepers',
      encoding_format: 'float',
    });
    expect(response).toEqual({
      object: 'list',
      data: [
        {
          object: 'embedding',
          index: 0,
          embedding: (await model.embed(['lighthouse keepers']))[0],
        },
      ],
      model: 'all-MiniLM-L6-v2',
      // The fake has no tokenizer: 18 characters at the estimate's 4 a token.
      usage: { prompt_tokens: 5, total_tokens: 5 },
    });
  });

  it('embeds an array input in order, across model batches', async () => {
    const input = ['tide tables', 'harbour pilots', 'lighthouse keepers'];
    const response = await client.embeddings.create({
      model: model.model,
      input,
      encoding_format: 'float',
    });
    expect(response.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(response.data.map((d) => d.embedding)).toEqual(await model.embed(input));
    expect(response.model).toBe(model.model);
  });

  it('answers base64 as little-endian float32 that decodes to the float output', async () => {
    const input = ['tide tables', 'harbour pilots'];
    const [floats, base64] = await Promise.all([
      client.embeddings.create({ model: model.model, input, encoding_format: 'float' }),
      client.embeddings.create({ model: model.model, input, encoding_format: 'base64' }),
    ]);
    const decoded = base64.data.map((d) => {
      const bytes = Buffer.from(d.embedding as unknown as string, 'base64');
      return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    });
    expect(decoded).toHaveLength(2);
    decoded.forEach((vector, i) => {
      expect(vector).toHaveLength(384);
      // float32 keeps about 7 significant digits of the float64 vector.
      vector.forEach((value, j) => expect(value).toBeCloseTo(floats.data[i]!.embedding[j]!, 6));
    });
  });

  it('decodes the SDK default (base64 on the wire) to the same vectors', async () => {
    const response = await client.embeddings.create({ model: model.model, input: 'tide tables' });
    const [expected] = await model.embed(['tide tables']);
    response.data[0]!.embedding.forEach((value, j) => expect(value).toBeCloseTo(expected![j]!, 6));
  });

  it('answers an unknown model with 404 model_not_found in OpenAI error shape', async () => {
    const error = await client.embeddings
      .create({ model: 'text-embedding-3-small', input: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({
      status: 404,
      code: 'model_not_found',
      param: 'model',
      type: 'invalid_request_error',
    });
  });

  it('lists the served models, and retrieves one', async () => {
    const models = [];
    for await (const m of client.models.list()) models.push(m);
    expect(models).toEqual([
      expect.objectContaining({ id: 'all-MiniLM-L6-v2', object: 'model', dimension: 384 }),
      expect.objectContaining({ id: model.model, object: 'model', owned_by: 'knowledge-base' }),
    ]);
    await expect(client.models.retrieve('all-MiniLM-L6-v2')).resolves.toMatchObject({
      id: 'all-MiniLM-L6-v2',
    });
    await expect(client.models.retrieve('gpt-4o')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('refuses a caller without a valid token, in OpenAI error shape', async () => {
    const anonymous = new OpenAI({ baseURL, apiKey: 'not-a-token', maxRetries: 0 });
    const error = await anonymous.models.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error).toMatchObject({ status: 401, type: 'authentication_error' });
  });

  it('keeps the internal catalog document-service reads, without a token', async () => {
    const response = await fetch(`${baseURL}/internal/models`);
    expect(await response.json()).toEqual({
      items: [
        { model: 'all-MiniLM-L6-v2', dimension: 384 },
        { model: model.model, dimension: 384 },
      ],
    });
  });

  it('answers a body that is not JSON in OpenAI error shape, before the route runs', async () => {
    const apiKey = await mintToken({ tenant: 'acme', user: 'agent' }, SECRET);
    const response = await fetch(`${baseURL}/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{"model": "all-MiniLM-L6-v2", "input": ',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        message: expect.any(String),
        type: 'invalid_request_error',
        param: null,
        code: 'bad_request',
      },
    });
  });

  it('keeps the API error shape on paths that are not OpenAI-compatible', async () => {
    const response = await fetch(`${baseURL}/internal/nothing-here`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: { code: 'not_found', message: expect.any(String) },
    });
  });

  describe('refuses bad input with 400 and a stable code', () => {
    const post = async (body: unknown) => {
      const error = await client.embeddings
        .create(body as OpenAI.EmbeddingCreateParams)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      return error as InstanceType<typeof OpenAI.BadRequestError>;
    };

    it.each([
      ['token ids', [1, 2, 3], 'token_input_unsupported'],
      ['arrays of token ids', [[1, 2], [3]], 'token_input_unsupported'],
      ['an empty string', '', 'invalid_request'],
      ['an empty array', [], 'invalid_request'],
      ['a number', 7, 'invalid_request'],
      ['too many texts', Array.from({ length: MAX_INPUTS + 1 }, () => 'x'), 'input_too_large'],
      [
        'too many characters',
        Array.from({ length: 4 }, () => 'x'.repeat(MAX_INPUT_CHARACTERS / 4 + 1)),
        'input_too_large',
      ],
    ])('input as %s', async (_label, input, code) => {
      const error = await post({ model: model.model, input, encoding_format: 'float' });
      expect(error).toMatchObject({ status: 400, code, param: 'input' });
    });

    it('a missing model', async () => {
      expect(await post({ input: 'x', encoding_format: 'float' })).toMatchObject({
        code: 'invalid_request',
        param: 'model',
      });
    });

    it('an unknown encoding_format', async () => {
      expect(await post({ model: model.model, input: 'x', encoding_format: 'int8' })).toMatchObject(
        { code: 'invalid_request', param: 'encoding_format' },
      );
    });

    it('dimensions other than the model has', async () => {
      const error = await post({ model: model.model, input: 'x', dimensions: 256 });
      expect(error).toMatchObject({ code: 'dimensions_unsupported', param: 'dimensions' });
    });
  });
});

/**
 * POST /v1/embeddings' permission, `model` budget and queue (review N5), in OpenAI's error shape:
 * its SDK raises PermissionDeniedError and RateLimitError.
 */
describe('OpenAI-compatible embeddings API, its permission and limits', () => {
  let app: INestApplication;
  let baseURL: string;
  const queue = new ModelRunQueue({ name: 'embeddings', concurrency: 1, maxWaiting: 1 });
  const model = new TestEmbeddingProvider(384);
  let release: () => void = () => undefined;
  let gated = false;
  /** The model, whose runs end when the test says so while `gated`. */
  const provider: EmbeddingProvider = {
    model: model.model,
    dimension: model.dimension,
    embed: async (texts) => {
      if (gated) await new Promise<void>((resolve) => (release = resolve));
      return model.embed(texts);
    },
  };

  beforeAll(async () => {
    const embedder = new CachedEmbedder(provider, null, 8);
    const moduleRef = await Test.createTestingModule({
      controllers: [OpenAiController],
      providers: [
        OpenAiEmbeddingsService,
        { provide: EMBEDDING_CONFIG, useValue: { EMBEDDING_BATCH_SIZE: 8 } },
        { provide: EMBEDDER, useValue: new Map([['all-MiniLM-L6-v2', embedder]]) },
        ...guardProviders(3, queue),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    useRestDefaults(app, verifier, new EmbeddingServiceExceptionFilter());
    await app.listen(0, '127.0.0.1');
    baseURL = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/v1`;
  });
  afterAll(() => app.close());

  const embed = async (user: string) => {
    const token = await mintToken({ tenant: 'acme', user }, SECRET);
    const response = await fetch(`${baseURL}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ model: 'all-MiniLM-L6-v2', input: ['tides'] }),
    });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as Record<string, unknown>,
    };
  };

  it('answers 403 permission_denied to a caller who may not read documents', async () => {
    const denied = await embed('outsider');
    expect(denied).toMatchObject({
      status: 403,
      body: {
        error: {
          code: 'permission_denied',
          type: 'permission_error',
          message: 'read on documents is not granted to outsider',
        },
      },
    });
    const client = new OpenAI({
      baseURL,
      apiKey: await mintToken({ tenant: 'acme', user: 'outsider' }, SECRET),
      maxRetries: 0,
    });
    await expect(
      client.embeddings.create({ model: 'all-MiniLM-L6-v2', input: 'x' }),
    ).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
  });

  it('answers 429 rate_limited once the caller has spent the model budget', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await embed('busy-bee')).status);
    expect(statuses).toEqual([200, 200, 200]);
    expect(await embed('busy-bee')).toMatchObject({
      status: 429,
      retryAfter: expect.stringMatching(/^\d+$/),
      body: {
        error: {
          code: 'rate_limited',
          type: 'rate_limit_error',
          message: 'too many model calls from this caller; retry later',
        },
      },
    });
  });

  it('answers 429 model_busy when the queue for the model is full', async () => {
    gated = true;
    const first = embed('queue-1'); // runs
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = embed('queue-2'); // waits
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(queue.load).toEqual({ running: 1, waiting: 1 });
    expect(await embed('queue-3')).toMatchObject({
      status: 429,
      retryAfter: '1',
      body: {
        error: {
          code: 'model_busy',
          type: 'rate_limit_error',
          message: 'too many embeddings requests are waiting for the model; retry shortly',
        },
      },
    });
    gated = false;
    release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect(queue.load).toEqual({ running: 0, waiting: 0 });
  });
});
