import { createHash } from 'node:crypto';

import { type EmbeddingProvider, embedQueries } from '@kb/embeddings';
import { timedStage, withSpan } from '@kb/observability';

import type { SearchCache } from '../cache/search.cache';

/** The embedding models query-service serves, as configured. */
export interface QueryModels {
  /** The deployment's model (EMBEDDING_*), the one embedding-service uses by default. */
  main: EmbeddingProvider;
  /** The name pipelines give the main model (EMBEDDING_MODEL); it may differ from `main.model`. */
  mainName: string;
  /** Models served beside it (EMBEDDING_EXTRA_MODELS): knowledge bases may name them. */
  extra: EmbeddingProvider[];
}

/**
 * A query embedding's cache entry read ahead of the search, in the result cache's round trip:
 * `value` undefined when Redis holds none (the model runs without asking Redis again).
 */
export interface PrefetchedEmbedding {
  key: string;
  value: string | undefined;
}

/**
 * Embeds a query with the model of the index space searched (docs/adr/0012), through the Redis
 * cache: another search that embedded the same text with the same model saves a model run.
 */
export class QueryEmbedder {
  private readonly byName: ReadonlyMap<string, EmbeddingProvider>;

  constructor(
    private readonly models: QueryModels,
    /** Null when no Redis is configured: every query is embedded. */
    private readonly cache: SearchCache | null,
  ) {
    // By the name pipelines use; the main model also under EMBEDDING_MODEL (see ADR 12).
    this.byName = new Map([
      [models.mainName, models.main],
      [models.main.model, models.main],
      ...models.extra.map((provider) => [provider.model, provider] as const),
    ]);
  }

  /** Every model name a query may be embedded with, and its vector size. */
  served(): Array<{ name: string; dimension: number }> {
    return [...this.byName].map(([name, provider]) => ({ name, dimension: provider.dimension }));
  }

  /**
   * True when `model` (undefined: the tenant's own space) is embedded by the main model and no
   * other is served: a search may then start embedding before it knows its index spaces.
   */
  mainIsOnly(model: string | undefined): boolean {
    return (
      this.models.extra.length === 0 &&
      (model === undefined || this.byName.get(model) === this.models.main)
    );
  }

  /** True when `model` (undefined: the tenant's own space) is embedded by the main model. */
  usesMain(model: string | undefined): boolean {
    return model === undefined || this.byName.get(model) === this.models.main;
  }

  /**
   * The cache key of `query`'s embedding by `model` (undefined: the main model), or undefined
   * when no cache is configured or the model is not served.
   */
  cacheKey(query: string, model: string | undefined): string | undefined {
    const embedder = model === undefined ? this.models.main : this.byName.get(model);
    return this.cache && embedder ? embeddingKey(embedder.model, query) : undefined;
  }

  /**
   * `model` undefined: the main model, the one of the tenant's own index space. `prefetched`:
   * the cache entry already read for this query and model (`cacheKey`), so Redis is not asked.
   */
  async embed(
    query: string,
    model: string | undefined,
    prefetched?: PrefetchedEmbedding,
  ): Promise<number[]> {
    const embedder = model === undefined ? this.models.main : this.byName.get(model);
    if (!embedder) throw new Error(`model "${model}" is not served by query-service`);
    const text = normalized(query);
    const key = embeddingKey(embedder.model, query);
    const cached =
      prefetched?.key === key
        ? prefetched.value
        : await timedStage('embed_cache', async () => this.cache?.get(key));
    if (cached) {
      const bytes = Buffer.from(cached, 'base64');
      return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    }
    // With the model's query prefix (bge, e5): passages were embedded with theirs.
    const [vector] = await timedStage('embed', () =>
      withSpan('kb.embed_query', { 'kb.model': embedder.model }, () =>
        embedQueries(embedder, [text]),
      ),
    );
    if (!vector) throw new Error('embedding provider returned no vector');
    // Behind the answer: the write fails open, and the next search of the text only needs it.
    void this.cache?.set(key, Buffer.from(new Float32Array(vector).buffer).toString('base64'));
    return vector;
  }
}

const normalized = (query: string): string => query.trim().replace(/\s+/g, ' ');

const embeddingKey = (model: string, query: string): string =>
  `kb:qemb:v1:${model}:${createHash('sha256').update(normalized(query)).digest('base64url')}`;
