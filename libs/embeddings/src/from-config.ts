import { BatchingEmbeddingProvider } from './batching-embedding-provider';
import type { EmbeddingProvider } from './embedding-provider';
import { OnnxEmbeddingProvider } from './onnx-embedding-provider';
import { OpenAiCompatibleEmbeddingProvider } from './openai-compatible/openai-embedding-provider';
import { TestEmbeddingProvider } from './test-embedding-provider';

/** The settings `embeddingConfigSchema` in @kb/config validates. */
export interface EmbeddingProviderSettings {
  EMBEDDING_PROVIDER: 'onnx' | 'openai';
  EMBEDDING_MODEL_DIR?: string | undefined;
  EMBEDDING_MODEL: string;
  EMBEDDING_POOLING: 'mean' | 'cls';
  EMBEDDING_THREADS: number;
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
  /** onnx: texts per model run at most, gathered from concurrent callers (default 32). */
  EMBEDDING_MAX_BATCH?: number | undefined;
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
      // One run at a time on EMBEDDING_THREADS threads, fed with batches of what concurrent
      // callers asked meanwhile, by similar length (docs/adr/0029).
      return new BatchingEmbeddingProvider(
        await OnnxEmbeddingProvider.load({
          modelDir: config.EMBEDDING_MODEL_DIR,
          model: config.EMBEDDING_MODEL,
          pooling: config.EMBEDDING_POOLING,
          threads: config.EMBEDDING_THREADS,
        }),
        {
          maxBatch: config.EMBEDDING_MAX_BATCH ?? 32,
          maxQueue: config.EMBEDDING_MAX_QUEUE ?? 1024,
        },
      );
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
 * The providers of EMBEDDING_EXTRA_MODELS, served beside the configured one. Only the FAKE test
 * embedder can be named (`test-hashing-<dimension>`), and its dimension must be the configured
 * model's: the vector store keeps one table per deployment. Anything else stops the service at boot.
 */
export function extraEmbeddingProviders(names: string[], dimension: number): EmbeddingProvider[] {
  return names.map((name) => {
    const match = /^test-hashing-(\d+)$/.exec(name);
    if (!match) {
      throw new Error(
        `EMBEDDING_EXTRA_MODELS: "${name}" cannot be served; only the test embedder test-hashing-<dimension> can be listed`,
      );
    }
    if (Number(match[1]) !== dimension) {
      throw new Error(
        `EMBEDDING_EXTRA_MODELS: "${name}" has ${match[1]} dimensions; the configured model has ${dimension}`,
      );
    }
    return new TestEmbeddingProvider(dimension);
  });
}
