/**
 * @jest-environment ./test/support/onnx.environment.js
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import {
  cosine,
  type EmbeddingProvider,
  embeddingProviderFromConfig,
  embedQueries,
  extraEmbeddingProviders,
  ONNX_MODELS,
  OnnxEmbeddingProvider,
  queryEmbeddingProviderFromConfig,
  TestEmbeddingProvider,
} from '../src';

jest.setTimeout(300_000);

const MODEL_DIR = process.env['EMBEDDING_MODEL_DIR'] ?? '';

const QUERY = 'how do vaccines train the immune system';
const RELEVANT =
  'A vaccine exposes the body to a harmless part of a pathogen so that the immune system learns to recognise it and produces antibodies.';
const UNRELATED =
  'The railway timetable lists the departures of every train from the central station on weekdays.';

/**
 * Every model of the catalogue, loaded offline from the folder scripts/infra/fetch-model.sh fills
 * (`npm run infra:up`): its dimension, its pooling and prefixes as trained, and a ranking a
 * real sentence encoder gets right (the FAKE hashing embedder would rank the "train" sentence
 * first, on a shared word).
 */
describe.each(Object.keys(ONNX_MODELS))('local model %s', (model) => {
  let provider: OnnxEmbeddingProvider;

  beforeAll(async () => {
    if (!existsSync(join(MODEL_DIR, model, 'onnx', 'model_quantized.onnx'))) {
      throw new Error(`no model at ${MODEL_DIR}/${model}: run npm run infra:up (it fetches it)`);
    }
    provider = await OnnxEmbeddingProvider.load({ modelDir: MODEL_DIR, model });
  });
  afterAll(() => provider?.close());

  it('embeds unit-length 384-dimensional vectors', async () => {
    const [vector] = await provider.embed([RELEVANT]);
    expect(provider.dimension).toBe(384);
    expect(vector).toHaveLength(384);
    expect(Math.hypot(...vector!)).toBeCloseTo(1, 5);
  });

  it('ranks the paraphrasing passage above the one sharing a word', async () => {
    const [query] = await provider.embedQueries([QUERY]);
    const [relevant, unrelated] = await provider.embed([RELEVANT, UNRELATED]);
    expect(cosine(query!, relevant!)).toBeGreaterThan(cosine(query!, unrelated!) + 0.1);
  });

  it('puts the query prefix before queries and the passage prefix before passages', async () => {
    const spec = ONNX_MODELS[model]!;
    const [asQuery] = await provider.embedQueries([QUERY]);
    const [asPassage] = await provider.embed([QUERY]);
    if (spec.queryPrefix === spec.passagePrefix) {
      expect(cosine(asQuery!, asPassage!)).toBeCloseTo(1, 5);
    } else {
      expect(cosine(asQuery!, asPassage!)).toBeLessThan(0.999);
      // The same as running the model on the prefixed texts, with no prefix of its own.
      const bare = await OnnxEmbeddingProvider.load({
        modelDir: MODEL_DIR,
        model,
        queryPrefix: '',
        passagePrefix: '',
      });
      try {
        const [manual] = await bare.embed([spec.queryPrefix + QUERY]);
        expect(cosine(asQuery!, manual!)).toBeCloseTo(1, 5);
      } finally {
        await bare.close();
      }
    }
  });
});

describe('extra models of a deployment', () => {
  it('loads local models by name, each with its own pooling', async () => {
    const providers: EmbeddingProvider[] = await extraEmbeddingProviders(
      ['bge-small-en-v1.5', 'test-hashing-384'],
      384,
      { EMBEDDING_MODEL_DIR: MODEL_DIR, EMBEDDING_THREADS: 1 },
    );
    try {
      expect(providers.map((p) => p.model)).toEqual(['bge-small-en-v1.5', 'test-hashing-384']);
      expect(providers[1]).toBeInstanceOf(TestEmbeddingProvider);
      // CLS pooling (the catalogue's) differs from mean pooling of the same model.
      const mean = await OnnxEmbeddingProvider.load({
        modelDir: MODEL_DIR,
        model: 'bge-small-en-v1.5',
        pooling: 'mean',
      });
      const [cls] = await providers[0]!.embed([RELEVANT]);
      const [averaged] = await mean.embed([RELEVANT]);
      await mean.close();
      expect(cosine(cls!, averaged!)).toBeLessThan(0.99);
    } finally {
      await Promise.all(providers.map((p) => p.close?.()));
    }
  });

  it('refuses a model of another dimension and one that is not installed, at boot', async () => {
    await expect(
      extraEmbeddingProviders(['e5-small-v2'], 768, {
        EMBEDDING_MODEL_DIR: MODEL_DIR,
        EMBEDDING_THREADS: 1,
      }),
    ).rejects.toThrow('"e5-small-v2" has 384 dimensions; the configured model has 768');
    await expect(
      extraEmbeddingProviders(['no-such-model'], 384, {
        EMBEDDING_MODEL_DIR: MODEL_DIR,
        EMBEDDING_THREADS: 1,
      }),
    ).rejects.toThrow();
    await expect(
      extraEmbeddingProviders(['test-hashing-64'], 384, { EMBEDDING_THREADS: 1 }),
    ).rejects.toThrow('"test-hashing-64" has 64 dimensions');
  });
});

/**
 * What query-service runs: the deployment's model comes wrapped in BatchingEmbeddingProvider (here
 * one run, in a worker thread; onnx-worker-pool.int-spec.ts covers several), extra models bare. Either way a bge
 * or e5 query must reach the model with its query prefix, as `embedQueries` sends it (until main
 * c57e8b3 the wrapper had no embedQueries and a main bge/e5 model lost its query prefix).
 */
describe.each(['bge-small-en-v1.5', 'e5-small-v2'])(
  'queries of %s through the configured provider',
  (model) => {
    it('carry the model\u2019s query prefix, as main and as extra model', async () => {
      const spec = ONNX_MODELS[model]!;
      const main = await embeddingProviderFromConfig({
        EMBEDDING_PROVIDER: 'onnx',
        EMBEDDING_MODEL_DIR: MODEL_DIR,
        EMBEDDING_MODEL: model,
        EMBEDDING_THREADS: 1,
        EMBEDDING_API_TIMEOUT_MS: 1000,
        EMBEDDING_API_MAX_RETRIES: 0,
      });
      const [extra] = await extraEmbeddingProviders([model], 384, {
        EMBEDDING_MODEL_DIR: MODEL_DIR,
        EMBEDDING_THREADS: 1,
      });
      const bare = await OnnxEmbeddingProvider.load({
        modelDir: MODEL_DIR,
        model,
        queryPrefix: '',
        passagePrefix: '',
      });
      try {
        // One text per run: padding in a batch moves a quantized model's vectors slightly.
        const [prefixed] = await bare.embed([spec.queryPrefix + QUERY]);
        const [unprefixed] = await bare.embed([QUERY]);
        const [asPassage] = await bare.embed([spec.passagePrefix + QUERY]);
        for (const provider of [main, extra!]) {
          const [query] = await embedQueries(provider, [QUERY]);
          const [passage] = await provider.embed([QUERY]);
          expect(cosine(query!, prefixed!)).toBeCloseTo(1, 5);
          expect(cosine(query!, unprefixed!)).toBeLessThan(0.99);
          expect(cosine(passage!, asPassage!)).toBeCloseTo(1, 5);
        }
      } finally {
        await Promise.all([main.close?.(), extra?.close?.(), bare.close()]);
      }
    });
  },
);

/**
 * The int8 model quantizes a run's activations with one scale for the whole run: a text's vector
 * moves with the texts that share its run. Passages may share runs (ingest throughput); a query
 * must not, or its results would depend on the other searches in flight.
 */
describe('a query embedded while others are in flight', () => {
  const settings = {
    EMBEDDING_PROVIDER: 'onnx' as const,
    EMBEDDING_MODEL_DIR: MODEL_DIR,
    EMBEDDING_MODEL: 'all-MiniLM-L6-v2',
    EMBEDDING_THREADS: 1,
    EMBEDDING_API_TIMEOUT_MS: 1000,
    EMBEDDING_API_MAX_RETRIES: 0,
    // A deployment that lets passages share runs, for ingest throughput.
    EMBEDDING_MAX_BATCH: 32,
  };
  const OTHERS = ['railway timetable of the central station', 'ERR_CONNECTION_RESET on upload'];

  /** `QUERY`'s vector alone, and while two other queries wait behind a first one. */
  async function aloneAndInFlight(provider: EmbeddingProvider) {
    const [alone] = await embedQueries(provider, [QUERY]);
    // The first text starts a run; the next ones queue behind it and may share the next run.
    const [, inFlight] = await Promise.all([
      embedQueries(provider, [OTHERS[0]!]),
      embedQueries(provider, [QUERY]),
      embedQueries(provider, [OTHERS[1]!]),
    ]);
    return { alone: alone!, inFlight: inFlight![0]! };
  }

  it('gets the vector it gets alone, to the last bit', async () => {
    const provider = await queryEmbeddingProviderFromConfig(settings);
    try {
      const { alone, inFlight } = await aloneAndInFlight(provider);
      expect(inFlight).toEqual(alone);
    } finally {
      await provider.close?.();
    }
  });

  it('would not, sharing a run (why queries run alone)', async () => {
    const provider = await embeddingProviderFromConfig(settings);
    try {
      const { alone, inFlight } = await aloneAndInFlight(provider);
      expect(inFlight).not.toEqual(alone);
      expect(cosine(inFlight, alone)).toBeGreaterThan(0.95);
    } finally {
      await provider.close?.();
    }
  });
});
