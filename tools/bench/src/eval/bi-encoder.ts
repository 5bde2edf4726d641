import { basename, dirname } from 'node:path';

import { type EmbeddingProvider, embedQueries, OnnxEmbeddingProvider } from '@kb/embeddings';

import type { PassageScorer } from './cross-encoder';

/**
 * A sentence encoder as a second opinion (ADR 47, "Second model measured"): each passage's
 * cosine with the query, both embedded with the model's own pooling and prefixes
 * (`OnnxEmbeddingProvider`). The model reads up to its own maximum length; `maxTokens` is ignored.
 * The query's vector is kept between calls for the same query.
 */
export class BiEncoderScorer implements PassageScorer {
  private last: { query: string; vector: number[] } | undefined;

  constructor(private readonly provider: EmbeddingProvider) {}

  /** `folder` is `<models dir>/<model id>`, as `scripts/infra/fetch-model.sh` lays it out. */
  static async load(folder: string, threads = 2): Promise<BiEncoderScorer> {
    return new BiEncoderScorer(
      await OnnxEmbeddingProvider.load({
        modelDir: dirname(folder),
        model: basename(folder),
        threads,
      }),
    );
  }

  async score(query: string, passages: readonly string[]): Promise<number[]> {
    if (passages.length === 0) return [];
    if (this.last?.query !== query) {
      const [vector] = await embedQueries(this.provider, [query]);
      this.last = { query, vector: vector ?? [] };
    }
    const q = this.last.vector;
    const vectors = await this.provider.embed([...passages]);
    // Unit-length vectors: the dot product is the cosine.
    return vectors.map((v) => v.reduce((sum, x, i) => sum + x * (q[i] ?? 0), 0));
  }

  async close(): Promise<void> {
    await this.provider.close?.();
  }
}
