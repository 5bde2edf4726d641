/** Who the texts are embedded for: a remote provider's rate limit is kept per (tenant, model). */
export interface EmbedContext {
  tenantId: string;
}

/** The embedding port: texts in, unit-length vectors out, in the same order. */
export interface EmbeddingProvider {
  /** Stable model id, part of every cache key and stored with every vector. */
  readonly model: string;
  readonly dimension: number;
  /** Passages to index (and any text not known to be a query). */
  embed(texts: string[], context?: EmbedContext): Promise<number[][]>;
  /**
   * Search queries, for models trained with a query instruction or prefix (bge, e5). Absent:
   * queries are embedded like passages (`embedQueries`).
   */
  embedQueries?(texts: string[], context?: EmbedContext): Promise<number[][]>;
  /**
   * Tokens the model reads for these texts, with its own tokenizer (the OpenAI-compatible
   * endpoint reports them as `usage`). Absent: callers estimate (`estimateTokens`).
   */
  countTokens?(texts: string[]): Promise<number>;
  close?(): Promise<void>;
}

/** Embeds search queries the way the provider's model expects them. */
export function embedQueries(
  provider: EmbeddingProvider,
  texts: string[],
  context?: EmbedContext,
): Promise<number[][]> {
  const args: [string[], EmbedContext?] = context ? [texts, context] : [texts];
  return provider.embedQueries ? provider.embedQueries(...args) : provider.embed(...args);
}

/** Splits `texts` into batches of `batchSize` and embeds them one batch at a time. */
export async function embedInBatches(
  provider: EmbeddingProvider,
  texts: string[],
  batchSize: number,
  context?: EmbedContext,
): Promise<number[][]> {
  const vectors: number[][] = [];
  for (let start = 0; start < texts.length; start += batchSize) {
    vectors.push(...(await provider.embed(texts.slice(start, start + batchSize), context)));
  }
  return vectors;
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
