import { setTimeout as sleep } from 'node:timers/promises';

import { meter } from '@kb/observability';
import { backOff } from 'exponential-backoff';
import { z } from 'zod';

import type { EmbedContext, EmbeddingProvider } from '../embedding-provider';
import {
  codeForStatus,
  EmbeddingApiError,
  type EmbeddingApiErrorCode,
  providerMessageOf,
} from './embedding-api.errors';
import { estimateTokens, KeyedRateLimiter, type RateLimit } from './rate-limiter';
import { retryAfterMs } from './retry-after';

export interface OpenAiCompatibleEmbeddingOptions {
  /**
   * The API root that `/embeddings` is appended to: `https://api.openai.com/v1`, Ollama's
   * `http://localhost:11434/v1`, a vLLM, TEI or LiteLLM server's `http://host:port/v1`.
   */
  baseUrl: string;
  /** The model name the API knows, sent as `model`. */
  model: string;
  /** Sent as `Authorization: Bearer`; self-hosted servers (Ollama, vLLM, TEI) usually need none. */
  apiKey?: string;
  /** Asks for shorter vectors (OpenAI's `dimensions`); else the model's own size, probed once. */
  dimensions?: number;
  /** Texts per request; a longer `embed` call is split. Default 64. */
  batchSize?: number;
  /** Per request, body included. Default 30 s. */
  timeoutMs?: number;
  /** Retries of a transient failure (network, timeout, 408, 429, 5xx). Default 4. */
  maxRetries?: number;
  /** Backoff: full jitter over `initialDelayMs × 2^(retry-1)`, capped at `maxDelayMs`. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** A longer Retry-After is not waited for: the call fails, to be retried later. Default 60 s. */
  maxRetryAfterMs?: number;
  /** Client-side budget per (tenant, model). */
  rateLimit?: RateLimit;
  /** The id stored with vectors and cache entries; default the model, `@<dimensions>` when set. */
  id?: string;
}

const DEFAULTS = {
  batchSize: 64,
  timeoutMs: 30_000,
  maxRetries: 4,
  initialDelayMs: 500,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 60_000,
};

/** The part of an OpenAI embeddings response this client reads. */
const embeddingsResponseSchema = z.object({
  data: z.array(z.object({ index: z.number().int().min(0), embedding: z.array(z.number()) })),
  usage: z.object({ prompt_tokens: z.number().optional() }).nullish(),
});

const requests = meter().createCounter('kb_embedding_api_requests_total', {
  description: 'HTTP requests to the embedding API, by model and outcome (ok or an error code)',
});
const retries = meter().createCounter('kb_embedding_api_retries_total', {
  description: 'Embedding API requests retried after a transient failure, by model and code',
});
const rateLimitWait = meter().createHistogram('kb_embedding_rate_limit_wait_ms', {
  description:
    'Time a request waited for the client-side rate limit (per tenant and model), by model',
  unit: 'ms',
});

/**
 * Embeddings from any server that speaks OpenAI's `POST /embeddings` (OpenAI, Azure-style proxies,
 * Ollama, vLLM, TEI, LiteLLM): batches, a request timeout, retries with exponential backoff and
 * full jitter on transient failures (honouring Retry-After), and a client-side rate limit per
 * (tenant, model). Vectors come back in input order and are L2-normalized.
 */
export class OpenAiCompatibleEmbeddingProvider implements EmbeddingProvider {
  readonly model: string;
  private readonly url: string;
  /** The URL as error messages show it. */
  private readonly shownUrl: string;
  private readonly settings: typeof DEFAULTS;
  private readonly limiter: KeyedRateLimiter;
  // The API key lives only here, a #private field: never in a log line, an inspected object or JSON.
  readonly #headers: Record<string, string>;

  /** The model name and size as the API is asked for them. */
  private readonly request: { model: string; dimensions?: number };

  private constructor(
    options: OpenAiCompatibleEmbeddingOptions,
    readonly dimension: number,
  ) {
    this.request = {
      model: options.model,
      ...(options.dimensions ? { dimensions: options.dimensions } : {}),
    };
    this.model =
      options.id ?? (options.dimensions ? `${options.model}@${options.dimensions}` : options.model);
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
    this.shownUrl = withoutCredentials(this.url);
    this.settings = {
      batchSize: options.batchSize ?? DEFAULTS.batchSize,
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
      initialDelayMs: options.initialDelayMs ?? DEFAULTS.initialDelayMs,
      maxDelayMs: options.maxDelayMs ?? DEFAULTS.maxDelayMs,
      maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs,
    };
    this.limiter = new KeyedRateLimiter(options.rateLimit ?? {});
    this.#headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    };
  }

  /**
   * Connects with one probe request, which also fails fast on a wrong URL, model or key: the
   * dimension is the probe's (and must match `dimensions` when that is set).
   */
  static async create(
    options: OpenAiCompatibleEmbeddingOptions,
  ): Promise<OpenAiCompatibleEmbeddingProvider> {
    const probe = new OpenAiCompatibleEmbeddingProvider(options, options.dimensions ?? 0);
    const [vector] = await probe.embed(['dimension probe']);
    const dimension = vector?.length ?? 0;
    if (dimension === 0) {
      throw new EmbeddingApiError('invalid_response', `${probe.shownUrl} returned an empty vector`);
    }
    return dimension === probe.dimension
      ? probe
      : new OpenAiCompatibleEmbeddingProvider(options, dimension);
  }

  async embed(texts: string[], context?: EmbedContext): Promise<number[][]> {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += this.settings.batchSize) {
      const batch = texts.slice(start, start + this.settings.batchSize);
      vectors.push(...(await this.embedBatch(batch, context?.tenantId ?? '')));
    }
    return vectors;
  }

  /** One request's worth, retried as the policy says. */
  private async embedBatch(input: string[], tenantId: string): Promise<number[][]> {
    const key = `${tenantId}\u0000${this.model}`;
    const estimate = estimateTokens(input);
    const numOfAttempts = this.settings.maxRetries + 1;
    let attempts = 0;
    try {
      return await backOff(
        async () => {
          attempts += 1;
          await this.waitForBudget(key, estimate);
          const { vectors, promptTokens } = await this.post(input);
          if (promptTokens !== undefined) this.limiter.adjust(key, promptTokens - estimate);
          return vectors;
        },
        {
          numOfAttempts,
          startingDelay: this.settings.initialDelayMs,
          timeMultiple: 2,
          maxDelay: this.settings.maxDelayMs,
          jitter: 'full',
          retry: (error: unknown, made: number) => this.retryAfter(error, made, numOfAttempts),
        },
      );
    } catch (error) {
      throw this.finalError(error, attempts);
    }
  }

  /** Decides whether to try again; waits out a Retry-After first (the backoff's jitter follows). */
  private async retryAfter(error: unknown, made: number, numOfAttempts: number): Promise<boolean> {
    if (!(error instanceof EmbeddingApiError) || !error.transient || made >= numOfAttempts) {
      return false;
    }
    const wait = error.retryAfterMs ?? 0;
    if (wait > this.settings.maxRetryAfterMs) return false;
    retries.add(1, { model: this.model, code: error.code });
    if (wait > 0) await sleep(wait);
    return true;
  }

  private finalError(error: unknown, attempts: number): unknown {
    if (!(error instanceof EmbeddingApiError) || !error.transient) return error;
    const wait = error.retryAfterMs ?? 0;
    const why =
      wait > this.settings.maxRetryAfterMs
        ? `the API asked to wait ${Math.ceil(wait / 1000)} s, more than the ${this.settings.maxRetryAfterMs / 1000} s this client waits`
        : `gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
    return new EmbeddingApiError(
      error.code,
      `${error.message} (${why})`,
      {
        status: error.status,
        providerMessage: error.providerMessage,
        retryAfterMs: error.retryAfterMs,
        attempts,
      },
      { cause: error },
    );
  }

  private async waitForBudget(key: string, tokens: number): Promise<void> {
    const wait = this.limiter.reserve(key, tokens);
    if (this.limiter.enabled) rateLimitWait.record(wait, { model: this.model });
    if (wait > 0) await sleep(wait);
  }

  private async post(input: string[]): Promise<{ vectors: number[][]; promptTokens?: number }> {
    let response: Response;
    let body: string;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: this.#headers,
        body: JSON.stringify({ ...this.request, input }),
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      body = await response.text();
    } catch (error) {
      throw this.count(this.transportError(error));
    }
    if (!response.ok) {
      const code = codeForStatus(response.status);
      const providerMessage = providerMessageOf(body);
      throw this.count(
        new EmbeddingApiError(
          code,
          `embedding API ${this.shownUrl} answered HTTP ${response.status}${providerMessage ? `: ${providerMessage}` : ''}`,
          {
            status: response.status,
            providerMessage,
            retryAfterMs: retryAfterMs(response.headers, response.status),
          },
        ),
      );
    }
    const result = this.parse(body, input.length);
    this.count(null);
    return result;
  }

  private parse(body: string, expected: number): { vectors: number[][]; promptTokens?: number } {
    let parsed: z.infer<typeof embeddingsResponseSchema>;
    try {
      parsed = embeddingsResponseSchema.parse(JSON.parse(body));
    } catch (error) {
      throw this.invalid(`is not an embeddings response: ${String(error).slice(0, 300)}`);
    }
    const vectors = new Array<number[] | undefined>(expected);
    for (const item of parsed.data) {
      if (item.index >= expected || vectors[item.index]) {
        throw this.invalid(`has a wrong or repeated index ${item.index} for ${expected} inputs`);
      }
      if (this.dimension > 0 && item.embedding.length !== this.dimension) {
        throw this.invalid(
          `returned ${item.embedding.length}-dimension vectors, expected ${this.dimension}`,
        );
      }
      vectors[item.index] = normalize(item.embedding);
    }
    if (parsed.data.length !== expected) {
      throw this.invalid(`has ${parsed.data.length} embeddings for ${expected} inputs`);
    }
    return { vectors: vectors as number[][], promptTokens: parsed.usage?.prompt_tokens };
  }

  private invalid(what: string): EmbeddingApiError {
    return this.count(
      new EmbeddingApiError('invalid_response', `embedding API ${this.shownUrl} response ${what}`),
    );
  }

  private transportError(error: unknown): EmbeddingApiError {
    const name = (error as { name?: string } | null)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      return new EmbeddingApiError(
        'timeout',
        `embedding API ${this.shownUrl} did not answer within ${this.settings.timeoutMs} ms`,
        {},
        { cause: error },
      );
    }
    const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
    const detail = cause?.code ?? cause?.message ?? String(error);
    return new EmbeddingApiError(
      'network',
      `embedding API ${this.shownUrl} unreachable: ${detail}`,
      {},
      { cause: error },
    );
  }

  /** Counts one request by outcome, passing an error through. */
  private count<E extends EmbeddingApiError | null>(error: E): E {
    const outcome: 'ok' | EmbeddingApiErrorCode = error?.code ?? 'ok';
    requests.add(1, { model: this.model, outcome });
    return error;
  }
}

function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(invalid URL)';
  }
}

/** Unit length, as the port promises (a zero vector stays zero). */
function normalize(vector: number[]): number[] {
  let sum = 0;
  for (const v of vector) sum += v * v;
  const norm = Math.sqrt(sum);
  return norm === 0 ? vector : vector.map((v) => v / norm);
}
