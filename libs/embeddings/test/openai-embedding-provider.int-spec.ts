import { inspect } from 'node:util';

import {
  cosine,
  EmbeddingApiError,
  embeddingProviderFromConfig,
  type OpenAiCompatibleEmbeddingOptions,
  OpenAiCompatibleEmbeddingProvider,
} from '../src';
import { FakeOpenAiEmbeddingsServer, type FakeRequest } from './fake-openai-embeddings-server';

jest.setTimeout(30_000);

const norm = (v: number[]) => Math.hypot(...v);
const unit = (v: number[]) => v.map((x) => x / norm(v));
const texts = (n: number, prefix = 't') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
/** Milliseconds between consecutive requests. */
const gaps = (requests: FakeRequest[]) => requests.slice(1).map((r, i) => r.at - requests[i]!.at);
/** Where an exact wait was asked, timers may fire a millisecond or two early. */
const SLACK_MS = 5;

async function rejection(promise: Promise<unknown>): Promise<EmbeddingApiError> {
  const error: unknown = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  if (!(error instanceof EmbeddingApiError)) throw error;
  return error;
}

describe('OpenAiCompatibleEmbeddingProvider against the FAKE OpenAI embeddings API', () => {
  const fake = new FakeOpenAiEmbeddingsServer({ dimension: 12 });
  let baseUrl: string;
  /** Fast backoff so retry tests take milliseconds. */
  const connect = (options: Partial<OpenAiCompatibleEmbeddingOptions> = {}) =>
    OpenAiCompatibleEmbeddingProvider.create({
      baseUrl,
      model: 'fake-embed',
      initialDelayMs: 10,
      maxDelayMs: 40,
      timeoutMs: 2_000,
      ...options,
    });
  /** A provider whose probe is already done and forgotten. */
  const ready = async (options: Partial<OpenAiCompatibleEmbeddingOptions> = {}) => {
    const provider = await connect(options);
    fake.reset();
    return provider;
  };

  beforeAll(async () => {
    baseUrl = await fake.start();
  });
  beforeEach(() => fake.reset());
  afterAll(() => fake.stop());

  it('is what EMBEDDING_PROVIDER=openai selects, with the settings of the config', async () => {
    const provider = await embeddingProviderFromConfig({
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_MODEL: 'all-MiniLM-L6-v2',
      EMBEDDING_POOLING: 'mean',
      EMBEDDING_THREADS: 1,
      EMBEDDING_API_URL: baseUrl,
      EMBEDDING_API_MODEL: 'fake-embed',
      EMBEDDING_API_DIMENSIONS: 6,
      EMBEDDING_API_TIMEOUT_MS: 1_000,
      EMBEDDING_API_MAX_RETRIES: 0,
      EMBEDDING_BATCH_SIZE: 2,
    });
    expect(provider).toBeInstanceOf(OpenAiCompatibleEmbeddingProvider);
    expect(provider).toMatchObject({ model: 'fake-embed@6', dimension: 6 });
    fake.reset();
    fake.failNext({ status: 503 });
    await expect(provider.embed(texts(3))).rejects.toMatchObject({ attempts: 1 }); // no retries
    await provider.embed(texts(3));
    expect(fake.requests.slice(1).map((r) => r.input.length)).toEqual([2, 1]);
  });

  it('detects the dimension from one probe request', async () => {
    const provider = await connect();
    expect(provider.dimension).toBe(12);
    expect(provider.model).toBe('fake-embed');
    expect(fake.requests.map((r) => r.input)).toEqual([['dimension probe']]);
  });

  it('asks for shorter vectors when dimensions is set, and names the model by both', async () => {
    const provider = await connect({ dimensions: 8 });
    const [vector] = await provider.embed(['short']);
    expect(provider.dimension).toBe(8);
    expect(vector).toHaveLength(8);
    // Another size is another vector space: the id keeps caches and stored vectors apart.
    expect(provider.model).toBe('fake-embed@8');
    expect(fake.requests.map((r) => r.dimensions)).toEqual([8, 8]);
  });

  it('sends batches of batchSize, in order, one request each', async () => {
    const provider = await ready({ batchSize: 4 });
    const input = texts(10);
    const vectors = await provider.embed(input);
    expect(fake.requests.map((r) => r.input)).toEqual([
      input.slice(0, 4),
      input.slice(4, 8),
      input.slice(8),
    ]);
    expect(vectors).toHaveLength(10);
    expect(await provider.embed([])).toEqual([]);
    expect(fake.requests).toHaveLength(3);
  });

  it('returns the vectors in input order by `index`, L2-normalized', async () => {
    const reversed = new FakeOpenAiEmbeddingsServer({ dimension: 12, reverse: true });
    const provider = await OpenAiCompatibleEmbeddingProvider.create({
      baseUrl: await reversed.start(),
      model: 'fake-embed',
    });
    try {
      const input = ['alpha', 'beta', 'gamma'];
      const vectors = await provider.embed(input);
      input.forEach((text, i) => {
        expect(norm(reversed.vectorFor(text))).not.toBeCloseTo(1, 2); // the fake's are not unit
        expect(norm(vectors[i]!)).toBeCloseTo(1, 10);
        expect(cosine(vectors[i]!, reversed.vectorFor(text))).toBeCloseTo(1, 10);
        unit(reversed.vectorFor(text)).forEach((x, d) => expect(vectors[i]![d]).toBeCloseTo(x, 12));
      });
    } finally {
      await reversed.stop();
    }
  });

  it('sends the API key as a bearer token, and no Authorization header without one', async () => {
    const keyed = new FakeOpenAiEmbeddingsServer({ apiKey: 'sk-test-123' });
    const keyedUrl = await keyed.start();
    try {
      const provider = await OpenAiCompatibleEmbeddingProvider.create({
        baseUrl: keyedUrl,
        model: 'fake-embed',
        apiKey: 'sk-test-123',
      });
      expect(keyed.requests.map((r) => r.authorization)).toEqual(['Bearer sk-test-123']);
      // Logging the provider never shows the key.
      expect(inspect(provider, { depth: 10, showHidden: true })).not.toContain('sk-test-123');
      expect(JSON.stringify(provider)).not.toContain('sk-test-123');
      const refused = await rejection(
        OpenAiCompatibleEmbeddingProvider.create({ baseUrl: keyedUrl, model: 'fake-embed' }),
      );
      expect(refused).toMatchObject({ code: 'rejected', status: 401, attempts: 1 });
      expect(keyed.requests[1]!.authorization).toBeUndefined();
      // The key never appears in what is logged of a failure.
      expect(`${refused.message} ${JSON.stringify(refused)}`).not.toContain('sk-test-123');
    } finally {
      await keyed.stop();
    }
  });

  it('retries a 503, a reset connection and a 429, then succeeds', async () => {
    const provider = await ready();
    fake.failNext({ status: 503, body: { error: 'overloaded' } }, { reset: true }, { status: 429 });
    const [vector] = await provider.embed(['retry me']);
    expect(cosine(vector!, fake.vectorFor('retry me'))).toBeCloseTo(1, 10);
    expect(fake.requests.map((r) => r.input)).toEqual(Array(4).fill(['retry me']));
  });

  it('waits as long as Retry-After says, in seconds or as an HTTP-date', async () => {
    const provider = await ready();
    fake.failNext({ status: 429, headers: { 'retry-after': '1' } });
    await provider.embed(['after seconds']);
    expect(gaps(fake.requests)[0]).toBeGreaterThanOrEqual(1_000 - SLACK_MS);

    fake.reset();
    // An HTTP-date has whole seconds: two seconds ahead is one to two seconds away, less the
    // few milliseconds before the client reads it.
    const date = new Date(Date.now() + 2_000).toUTCString();
    fake.failNext({ status: 503, headers: { 'retry-after': date } });
    await provider.embed(['after a date']);
    expect(gaps(fake.requests)[0]).toBeGreaterThanOrEqual(900);
  });

  it("waits for OpenAI's x-ratelimit-reset-* of the spent budget on a 429", async () => {
    const provider = await ready();
    fake.failNext({
      status: 429,
      headers: {
        'x-ratelimit-remaining-requests': '12',
        'x-ratelimit-reset-requests': '20ms',
        'x-ratelimit-remaining-tokens': '0',
        'x-ratelimit-reset-tokens': '0.6s',
      },
    });
    await provider.embed(['tokens spent']);
    expect(gaps(fake.requests)[0]).toBeGreaterThanOrEqual(600 - SLACK_MS);
  });

  it('gives up after maxRetries + 1 attempts with an error that says so', async () => {
    const provider = await ready({ maxRetries: 2 });
    fake.failNext(...Array(5).fill({ status: 503, body: { error: { message: 'try later' } } }));
    const error = await rejection(provider.embed(['doomed']));
    expect(error).toMatchObject({
      code: 'unavailable',
      status: 503,
      providerMessage: 'try later',
      attempts: 3,
      transient: true,
    });
    expect(error.message).toMatch(/HTTP 503: try later \(gave up after 3 attempts\)/);
    expect(fake.requests).toHaveLength(3);
  });

  it('fails at once on a 400, with the status and the API message', async () => {
    const provider = await ready();
    fake.failNext({
      status: 400,
      body: { error: { message: 'This model maximum context length is 8192 tokens', code: null } },
    });
    const error = await rejection(provider.embed(['far too long']));
    expect(error).toMatchObject({
      code: 'rejected',
      status: 400,
      providerMessage: 'This model maximum context length is 8192 tokens',
      attempts: 1,
      transient: false,
    });
    expect(fake.requests).toHaveLength(1);
  });

  it('fails at boot on an unknown model, with the API message', async () => {
    const error = await rejection(connect({ model: 'no-such-model' }));
    expect(error).toMatchObject({ code: 'rejected', status: 404 });
    expect(error.message).toContain('The model `no-such-model` does not exist');
  });

  it('retries a request that times out', async () => {
    const provider = await ready({ timeoutMs: 200 });
    fake.failNext({ delayMs: 1_000 });
    const started = performance.now();
    const [vector] = await provider.embed(['slow']);
    expect(vector).toHaveLength(12);
    expect(fake.requests).toHaveLength(2);
    expect(performance.now() - started).toBeLessThan(1_000); // did not wait for the slow answer
  });

  it('reports a timeout when every attempt is too slow', async () => {
    const provider = await ready({ timeoutMs: 100, maxRetries: 1 });
    fake.failNext({ delayMs: 500 }, { delayMs: 500 });
    const error = await rejection(provider.embed(['slower']));
    expect(error).toMatchObject({ code: 'timeout', attempts: 2 });
    expect(error.message).toMatch(/did not answer within 100 ms \(gave up after 2 attempts\)/);
  });

  it('does not sleep through a Retry-After longer than maxRetryAfterMs', async () => {
    const provider = await ready({ maxRetryAfterMs: 5_000 });
    fake.failNext({ status: 429, headers: { 'retry-after': '3600' } });
    const error = await rejection(provider.embed(['later']));
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: 3_600_000, attempts: 1 });
    expect(error.message).toMatch(/asked to wait 3600 s, more than the 5 s/);
  });

  it('spaces requests by the rate limit per tenant (and model); tenants do not wait for each other', async () => {
    // 600 a minute, no burst: one request each 100 ms per tenant.
    const provider = await ready({
      batchSize: 1,
      rateLimit: { requestsPerMinute: 600, burstSeconds: 0 },
    });
    const started = performance.now();
    await Promise.all([
      provider.embed(texts(4, 'a'), { tenantId: 'tenant-a' }),
      provider.embed(texts(2, 'b'), { tenantId: 'tenant-b' }),
    ]);
    const of = (prefix: string) => fake.requests.filter((r) => r.input[0]!.startsWith(prefix));
    // The k-th request of a tenant goes out no sooner than k intervals after the start.
    for (const prefix of ['a', 'b']) {
      of(prefix).forEach((request, k) => {
        expect(request.at - started).toBeGreaterThanOrEqual(k * 100 - SLACK_MS);
      });
    }
    // Both tenants start at once: b's first request does not queue behind a's.
    expect(of('b')[0]!.at - started).toBeLessThan(of('a')[1]!.at - started);
    expect(of('b')[1]!.at).toBeLessThan(of('a')[2]!.at);
  });
});

const realUrl = process.env['EMBEDDING_API_URL'];
const realModel = process.env['EMBEDDING_API_MODEL'];
const real = realUrl && realModel ? describe : describe.skip;
if (!realUrl || !realModel) {
  process.stdout.write(
    'OpenAiCompatibleEmbeddingProvider against a real API: SKIPPED (set EMBEDDING_API_URL and EMBEDDING_API_MODEL, and EMBEDDING_API_KEY if the API needs one)\n',
  );
}

real('OpenAiCompatibleEmbeddingProvider against a real API (EMBEDDING_API_URL)', () => {
  it('embeds a batch: unit vectors of the probed dimension, a paraphrase nearer than an unrelated text', async () => {
    const dimensions = process.env['EMBEDDING_API_DIMENSIONS'];
    const provider = await OpenAiCompatibleEmbeddingProvider.create({
      baseUrl: realUrl ?? '',
      model: realModel ?? '',
      apiKey: process.env['EMBEDDING_API_KEY'],
      dimensions: dimensions ? Number(dimensions) : undefined,
      batchSize: 2,
    });
    const [cat, kitten, invoice] = await provider.embed(
      [
        'The cat sat on the mat.',
        'A kitten is sitting on a rug.',
        'Quarterly invoice totals are due by Friday.',
      ],
      { tenantId: 'real-api-test' },
    );
    for (const vector of [cat, kitten, invoice]) {
      expect(vector).toHaveLength(provider.dimension);
      expect(norm(vector!)).toBeCloseTo(1, 5);
    }
    expect(cosine(cat!, kitten!)).toBeGreaterThan(cosine(cat!, invoice!));
  });
});
