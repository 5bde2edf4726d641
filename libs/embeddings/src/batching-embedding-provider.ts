import { type EmbedContext, type EmbeddingProvider, embedQueries } from './embedding-provider';
import { estimateTokens } from './openai-compatible/rate-limiter';

export interface BatchingOptions {
  /** Texts per model run at most. */
  maxBatch: number;
  /**
   * A run's padded size at most, in estimated tokens: its texts times the longest one's length
   * (`estimateTokens`: about four characters a token, no tokenizer run). Unset: no limit but
   * `maxBatch`. A text longer than the budget runs alone.
   */
  maxBatchTokens?: number;
  /** Texts waiting at most; beyond it `embed` fails at once with `EmbeddingQueueFullError`. */
  maxQueue: number;
  /**
   * Model runs at once (default 1): more only when the inner provider runs them on threads of
   * their own (`OnnxWorkerPool`); each run takes the next batch as it frees.
   */
  parallelRuns?: number;
}

/** The model's queue is full: the caller should shed the request rather than wait. */
export class EmbeddingQueueFullError extends Error {
  constructor(readonly queued: number) {
    super(`the embedding queue is full (${queued} texts waiting)`);
  }
}

interface Pending {
  text: string;
  /** Queries and passages never share a run: a query takes the model's query prefix. */
  query: boolean;
  context: EmbedContext | undefined;
  resolve: (vector: number[] | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * One model run at a time (or `parallelRuns` on worker threads), fed with what concurrent callers
 * asked meanwhile (docs/adr/0029):
 * while a run is in progress, new texts queue; the next run takes up to `maxBatch` of them, of
 * similar lengths (the queue sorted by length, the window holding the oldest text), so a batch
 * pads little. The model's own threads use the cores: one run of a two-thread session is the
 * lowest latency for a lone query, and batching keeps throughput when many arrive together,
 * instead of several runs competing for the same cores. The queue is bounded.
 */
export class BatchingEmbeddingProvider implements EmbeddingProvider {
  readonly model: string;
  readonly dimension: number;
  private queue: Pending[] = [];
  private running = 0;

  constructor(
    private readonly inner: EmbeddingProvider,
    private readonly options: BatchingOptions,
  ) {
    this.model = inner.model;
    this.dimension = inner.dimension;
    if (inner.countTokens) this.countTokens = (texts) => inner.countTokens!(texts);
  }

  countTokens?: (texts: string[]) => Promise<number>;

  /** Texts waiting for a run (not counting the one in progress). */
  get queued(): number {
    return this.queue.length;
  }

  embed(texts: string[], context?: EmbedContext): Promise<number[][]> {
    return this.enqueue(texts, false, context);
  }

  /** Search queries, run through the model's own `embedQueries` (bge and e5 prefix them). */
  embedQueries(texts: string[], context?: EmbedContext): Promise<number[][]> {
    return this.enqueue(texts, true, context);
  }

  private async enqueue(
    texts: string[],
    query: boolean,
    context: EmbedContext | undefined,
  ): Promise<number[][]> {
    if (texts.length === 0) return [];
    if (this.queue.length + texts.length > this.options.maxQueue) {
      throw new EmbeddingQueueFullError(this.queue.length);
    }
    const waiting = texts.map(
      (text) =>
        new Promise<number[] | undefined>((resolve, reject) => {
          this.queue.push({ text, query, context, resolve, reject });
        }),
    );
    this.pump();
    const vectors = await Promise.all(waiting);
    return vectors.map((vector) => {
      if (!vector) throw new Error('embedding provider returned no vector');
      return vector;
    });
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }

  private pump(): void {
    while (this.running < (this.options.parallelRuns ?? 1) && this.queue.length > 0) {
      this.startRun();
    }
  }

  private startRun(): void {
    const batch = this.nextBatch();
    this.running += 1;
    // One context per run: texts of different callers share a run only when their contexts
    // agree (a remote API's rate limit is kept per tenant).
    const texts = batch.map((p) => p.text);
    const { query, context } = batch[0]!;
    const run = query
      ? embedQueries(this.inner, texts, context)
      : context
        ? this.inner.embed(texts, context)
        : this.inner.embed(texts);
    void run
      .then(
        (vectors) => batch.forEach((p, i) => p.resolve(vectors[i])),
        (error: unknown) => batch.forEach((p) => p.reject(error)),
      )
      .finally(() => {
        this.running -= 1;
        this.pump();
      });
  }

  /**
   * Up to `maxBatch` texts of similar length, always including the oldest one waiting, and no more
   * than `maxBatchTokens` allow: a run pads every text to its longest, and past a few hundred
   * tokens a larger run of the int8 model is slower per text, not faster (docs/adr/0029).
   */
  private nextBatch(): Pending[] {
    const oldest = this.queue[0]!;
    const sameContext = this.queue.filter(
      (p) => p.query === oldest.query && p.context?.tenantId === oldest.context?.tenantId,
    );
    const sorted = [...sameContext].sort((a, b) => a.text.length - b.text.length);
    const at = sorted.indexOf(oldest);
    const [start, end] = this.windowAround(sorted, at);
    const batch = sorted.slice(start, end);
    const taken = new Set(batch);
    this.queue = this.queue.filter((p) => !taken.has(p));
    return batch;
  }

  /**
   * The run holding `sorted[at]`: `maxBatch` texts from `at` on (slid back at the queue's end),
   * or, with `maxBatchTokens`, as many of its neighbours as keep the run's size (its texts times
   * its longest, the window's last) within the budget: longer ones first, then shorter ones.
   */
  private windowAround(sorted: Pending[], at: number): [number, number] {
    const { maxBatch, maxBatchTokens } = this.options;
    if (maxBatchTokens === undefined) {
      const start = Math.max(0, Math.min(at, sorted.length - maxBatch));
      return [start, Math.min(sorted.length, start + maxBatch)];
    }
    const fits = (size: number, longest: Pending) =>
      size <= maxBatch && size * estimateTokens([longest.text]) <= maxBatchTokens;
    let [start, end] = [at, at + 1];
    while (end < sorted.length && fits(end - start + 1, sorted[end]!)) end += 1;
    while (start > 0 && fits(end - start + 1, sorted[end - 1]!)) start -= 1;
    return [start, end];
  }
}
