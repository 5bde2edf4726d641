import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { Piscina } from 'piscina';

import type { EmbeddingProvider } from './embedding-provider';
import type { OnnxWorkerAnswer, OnnxWorkerTask } from './onnx.worker';
import type { OnnxEmbeddingOptions } from './onnx-embedding-provider';

/**
 * The local ONNX model run in `runs` worker threads, one session each (docs/adr/0029, Ingest).
 * onnxruntime-node runs a session synchronously on the calling thread: in the main thread a run
 * stops the event loop (Kafka, S3, Postgres, HTTP wait for it) and two sessions take turns on one
 * core. In worker threads, `runs` batches run at once on as many cores while the event loop
 * keeps the I/O of the documents around them going. Feed it through `BatchingEmbeddingProvider`
 * with `parallelRuns` equal to `runs`.
 */
export class OnnxWorkerPool implements EmbeddingProvider {
  private constructor(
    readonly model: string,
    readonly dimension: number,
    private readonly pool: Piscina<OnnxWorkerTask, OnnxWorkerAnswer>,
    private readonly options: OnnxEmbeddingOptions,
  ) {}

  /** Starts `runs` threads and loads the model in each; `workerFile` is for tests. */
  static async load(
    options: OnnxEmbeddingOptions,
    runs: number,
    workerFile = builtWorker(),
  ): Promise<OnnxWorkerPool> {
    if (!existsSync(workerFile)) throw new Error(`the model worker ${workerFile} is not built`);
    const pool = new Piscina<OnnxWorkerTask, OnnxWorkerAnswer>({
      filename: workerFile,
      minThreads: runs,
      maxThreads: runs,
      idleTimeout: Number.POSITIVE_INFINITY,
      // One task per thread: the batching in front decides what waits.
      concurrentTasksPerWorker: 1,
    });
    try {
      // Every thread loads the model before the service says it is ready.
      const answers = await Promise.all(
        Array.from({ length: runs }, () => pool.run({ options, kind: 'dimension', texts: [] })),
      );
      const dimension = 'dimension' in answers[0]! ? answers[0].dimension : 0;
      return new OnnxWorkerPool(options.model, dimension, pool, options);
    } catch (error) {
      await pool.destroy();
      throw error;
    }
  }

  embed(texts: string[]): Promise<number[][]> {
    return this.vectors('passages', texts);
  }

  embedQueries(texts: string[]): Promise<number[][]> {
    return this.vectors('queries', texts);
  }

  async countTokens(texts: string[]): Promise<number> {
    const answer = await this.pool.run({ options: this.options, kind: 'tokens', texts });
    return 'tokens' in answer ? answer.tokens : 0;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }

  private async vectors(kind: 'passages' | 'queries', texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const answer = await this.pool.run({ options: this.options, kind, texts });
    if (!('vectors' in answer)) throw new Error('the model worker answered no vectors');
    const { vectors, dimension } = answer;
    return texts.map((_, i) => Array.from(vectors.subarray(i * dimension, (i + 1) * dimension)));
  }
}

/**
 * The compiled worker. Services run from dist, where the build puts it beside this file; code run
 * from source (tests under ts-jest) finds it in the library's dist, which `npm test` builds first.
 */
function builtWorker(): string {
  const beside = join(__dirname, 'onnx.worker.js');
  return existsSync(beside) ? beside : join(__dirname, '..', 'dist', 'onnx.worker.js');
}
