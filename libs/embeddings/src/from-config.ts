import { BatchingEmbeddingProvider } from './batching-embedding-provider';
import type { EmbeddingProvider } from './embedding-provider';
import { OnnxEmbeddingProvider } from './onnx-embedding-provider';
import { OnnxWorkerPool } from './onnx-worker-pool';
import { OpenAiCompatibleEmbeddingProvider } from './openai-compatible/openai-embedding-provider';
import { TestEmbeddingProvider } from './test-embedding-provider';

/** The settings `embeddingConfigSchema` in @kb/config validates. */
export interface EmbeddingProviderSettings {
  EMBEDDING_PROVIDER: 'onnx' | 'openai';
  EMBEDDING_MODEL_DIR?: string | undefined;
  EMBEDDING_MODEL: string;
  /** Unset: the model catalogue's pooling (model-catalog.ts), else mean. */
  EMBEDDING_POOLING?: 'mean' | 'cls' | undefined;
  EMBEDDING_THREADS: number;
  /**
   * onnx: model runs at once, each in a worker thread of its own with EMBEDDING_THREADS threads
   * (default 1: one run, in a worker thread too, so the event loop never waits for the model).
   */
  EMBEDDING_RUNS?: number | undefined;
  EMBEDDING_API_URL?: string | undefined;
  EMBEDDING_API_KEY?: string | undefined;
  EMBEDDING_API_MODEL?: string | undefined;
  EMBEDDING_API_DIMENSIONS?: number | undefined;
  EMBEDDING_API_TIMEOUT_MS: number;
  EMBEDDING_API_MAX_RETRIES: number;
  EMBEDDING_RATE_LIMIT_RPM?: number | undefined;
  EMBEDDING_RATE_LIMIT_TPM?: number | undefined;
  /** Texts per request to a remote API. */
  EMBEDDING_BATCH_SIZE?: number | undefined;
  /** onnx: texts per model run at most, gathered from concurrent callers (default 1: alone). */
  EMBEDDING_MAX_BATCH?: number | undefined;
  /** onnx: a run's padded size at most, in estimated tokens (default: no limit but the count). */
  EMBEDDING_MAX_BATCH_TOKENS?: number | undefined;
  /** onnx: texts waiting for the model at most; beyond, embedding fails at once (default 1024). */
  EMBEDDING_MAX_QUEUE?: number | undefined;
}

/** Loads the configured provider: the local ONNX model, or an OpenAI-compatible API (probed once). */
export async function embeddingProviderFromConfig(
  config: EmbeddingProviderSettings,
): Promise<EmbeddingProvider> {
  switch (config.EMBEDDING_PROVIDER) {
    case 'onnx':
      if (!config.EMBEDDING_MODEL_DIR) {
        throw new Error('EMBEDDING_PROVIDER=onnx needs EMBEDDING_MODEL_DIR');
      }
      {
        // EMBEDDING_RUNS runs at a time, each in a worker thread of its own, on EMBEDDING_THREADS
        // threads each, fed with batches of what concurrent callers asked meanwhile, by similar
        // length (docs/adr/0029). One run is in a worker too: onnxruntime-node runs a session
        // synchronously, so in the main thread a search's model run held back its BM25 and index
        // queries, and every other request, for as long as it lasted.
        const options = {
          modelDir: config.EMBEDDING_MODEL_DIR,
          model: config.EMBEDDING_MODEL,
          pooling: config.EMBEDDING_POOLING,
          threads: config.EMBEDDING_THREADS,
        };
        const runs = config.EMBEDDING_RUNS ?? 1;
        return new BatchingEmbeddingProvider(await OnnxWorkerPool.load(options, runs), {
          maxBatch: config.EMBEDDING_MAX_BATCH ?? 1,
          maxBatchTokens: config.EMBEDDING_MAX_BATCH_TOKENS,
          maxQueue: config.EMBEDDING_MAX_QUEUE ?? 1024,
          parallelRuns: runs,
        });
      }
    case 'openai':
      if (!config.EMBEDDING_API_URL || !config.EMBEDDING_API_MODEL) {
        throw new Error(
          'EMBEDDING_PROVIDER=openai needs EMBEDDING_API_URL and EMBEDDING_API_MODEL',
        );
      }
      return OpenAiCompatibleEmbeddingProvider.create({
        baseUrl: config.EMBEDDING_API_URL,
        model: config.EMBEDDING_API_MODEL,
        apiKey: config.EMBEDDING_API_KEY,
        dimensions: config.EMBEDDING_API_DIMENSIONS,
        batchSize: config.EMBEDDING_BATCH_SIZE,
        timeoutMs: config.EMBEDDING_API_TIMEOUT_MS,
        maxRetries: config.EMBEDDING_API_MAX_RETRIES,
        rateLimit: {
          requestsPerMinute: config.EMBEDDING_RATE_LIMIT_RPM,
          tokensPerMinute: config.EMBEDDING_RATE_LIMIT_TPM,
        },
      });
  }
}

/**
 * The configured provider as query-service embeds queries with it: every query in a model run of
 * its own (EMBEDDING_MAX_BATCH ignored). The int8 models quantize a run's activations with one
 * scale for the whole run, so a query batched with others got a slightly different vector, and
 * different results, depending on what else was in flight (CISI nDCG@10 0.448-0.456 over three
 * evaluations of one knowledge base; docs/adr/0029, twelfth pass). Alone, a query's vector depends
 * on its text only, as the result and embedding caches assume.
 */
export function queryEmbeddingProviderFromConfig(
  config: EmbeddingProviderSettings,
): Promise<EmbeddingProvider> {
  return embeddingProviderFromConfig({ ...config, EMBEDDING_MAX_BATCH: 1 });
}

/**
 * The providers of EMBEDDING_EXTRA_MODELS, served beside the configured one: local ONNX models
 * from EMBEDDING_MODEL_DIR (each with its catalogue pooling and prefixes), or the FAKE test
 * embedder `test-hashing-<dimension>`, which only test suites list. Every extra model must have
 * the configured model's dimension (the pgvector migrations keep one table per dimension and a
 * service holds one); anything else stops the service at boot.
 */
export async function extraEmbeddingProviders(
  names: string[],
  dimension: number,
  settings: Pick<EmbeddingProviderSettings, 'EMBEDDING_MODEL_DIR' | 'EMBEDDING_THREADS'>,
): Promise<EmbeddingProvider[]> {
  const providers: EmbeddingProvider[] = [];
  try {
    for (const name of names) {
      const fake = /^test-hashing-(\d+)$/.exec(name);
      if (fake) {
        if (Number(fake[1]) !== dimension) {
          throw new Error(
            `EMBEDDING_EXTRA_MODELS: "${name}" has ${fake[1]} dimensions; the configured model has ${dimension}`,
          );
        }
        providers.push(new TestEmbeddingProvider(dimension));
        continue;
      }
      if (!settings.EMBEDDING_MODEL_DIR) {
        throw new Error(
          `EMBEDDING_EXTRA_MODELS: "${name}" is a local model and needs EMBEDDING_MODEL_DIR`,
        );
      }
      const provider = await OnnxEmbeddingProvider.load({
        modelDir: settings.EMBEDDING_MODEL_DIR,
        model: name,
        threads: settings.EMBEDDING_THREADS,
      });
      providers.push(provider);
      if (provider.dimension !== dimension) {
        throw new Error(
          `EMBEDDING_EXTRA_MODELS: "${name}" has ${provider.dimension} dimensions; the configured model has ${dimension} (one vector table per deployment)`,
        );
      }
    }
    return providers;
  } catch (error) {
    await Promise.all(providers.map((p) => p.close?.()));
    throw error;
  }
}
