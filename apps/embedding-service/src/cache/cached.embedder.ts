import { createHash } from 'node:crypto';

import { type EmbedContext, type EmbeddingProvider, embedInBatches } from '@kb/embeddings';
import { meter } from '@kb/observability';
import { Logger } from '@nestjs/common';

import type { EmbeddingCache } from './embedding-cache.repository';

const lookups = meter().createCounter('kb_embedding_cache_lookups_total', {
  description: 'Chunks looked up in the embedding cache, by model and outcome (hit or miss)',
});
const modelCalls = meter().createCounter('kb_embedding_model_calls_total', {
  description: 'Batches sent to the embedding model, by model',
});

/** The cache key of a text: hex SHA-256 of its UTF-8 bytes, as the parser computes it. */
const sha256Of = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * Embeds chunks through the cache: only texts the model has not embedded before (for this model)
 * reach it, in batches; identical texts within a document are embedded once. A cache outage costs
 * model time, never the document. Where the model returned no vector the result has none either
 * (and nothing is cached): the caller decides what a gap means.
 *
 * The cache key is the SHA-256 of the text, computed here: never a hash the chunk carries. The
 * cache is shared by every tenant, and a `kb.document.parsed` event (or its claim object) saying
 * `{text: "attacker text", sha256: sha256("common paragraph")}` would otherwise store the
 * attacker's vector for every tenant's copy of that paragraph, or read another text's vector
 * (review N8).
 */
export class CachedEmbedder {
  private readonly logger = new Logger(CachedEmbedder.name);

  constructor(
    readonly provider: EmbeddingProvider,
    private readonly cache: EmbeddingCache | null,
    private readonly batchSize: number,
  ) {}

  async embed(
    texts: ReadonlyArray<{ text: string }>,
    context?: EmbedContext,
  ): Promise<Array<number[] | undefined>> {
    const model = this.provider.model;
    const chunks = texts.map(({ text }) => ({ text, sha256: sha256Of(text) }));
    let cached = new Map<string, number[]>();
    if (this.cache) {
      try {
        cached = await this.cache.get(model, [...new Set(chunks.map((c) => c.sha256))]);
      } catch (error) {
        this.logger.warn(`embedding cache unavailable, embedding everything: ${String(error)}`);
      }
    }
    const uncached = chunks.filter((c) => !cached.has(c.sha256));
    lookups.add(chunks.length - uncached.length, { model, outcome: 'hit' });
    lookups.add(uncached.length, { model, outcome: 'miss' });
    const missing = [...new Map(uncached.map((c) => [c.sha256, c])).values()];
    if (missing.length > 0) {
      modelCalls.add(Math.ceil(missing.length / this.batchSize), { model });
      const vectors = await embedInBatches(
        this.provider,
        missing.map((c) => c.text),
        this.batchSize,
        context,
      );
      const fresh = missing.flatMap((c, i) => {
        const vector = vectors[i];
        return vector ? [{ sha256: c.sha256, vector }] : [];
      });
      for (const entry of fresh) cached.set(entry.sha256, entry.vector);
      await this.cache?.put(model, fresh).catch((error: unknown) => {
        this.logger.warn(`embedding cache write failed: ${String(error)}`);
      });
    }
    return chunks.map((c) => cached.get(c.sha256));
  }
}
