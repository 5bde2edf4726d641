import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { Piscina } from 'piscina';

import type { CrossEncoderTask } from './cross-encoder.worker';
import type { CrossEncoderOptions } from './cross-encoder-model';

/**
 * The cross-encoder in a worker thread of its own (docs/adr/0047): onnxruntime-node runs a session
 * synchronously on the calling thread, and a rerank of ten passages takes a few hundred
 * milliseconds, which on the service's event loop would hold back every other request. Calls
 * queue for the one thread; the thread's run uses `threads` cores.
 */
export class CrossEncoderWorkerPool {
  private constructor(
    readonly model: string,
    private readonly pool: Piscina<CrossEncoderTask, number[]>,
    private readonly options: CrossEncoderOptions,
  ) {}

  /** Starts the thread and loads the model in it; fails as loading fails. `workerFile` is for tests. */
  static async load(
    options: CrossEncoderOptions,
    workerFile = builtWorker(),
  ): Promise<CrossEncoderWorkerPool> {
    if (!existsSync(workerFile))
      throw new Error(`the cross-encoder worker ${workerFile} is not built`);
    const pool = new Piscina<CrossEncoderTask, number[]>({
      filename: workerFile,
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: 1,
    });
    try {
      await pool.run({ options, query: '', passages: [] });
      return new CrossEncoderWorkerPool(options.model, pool, options);
    } catch (error) {
      await pool.destroy();
      throw error;
    }
  }

  /** One relevance logit per (query, passage) pair; higher is more relevant. */
  score(query: string, passages: string[]): Promise<number[]> {
    if (passages.length === 0) return Promise.resolve([]);
    return this.pool.run({ options: this.options, query, passages });
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

/** Beside this file when run from dist; from source (tests), in the library's dist. */
function builtWorker(): string {
  const beside = join(__dirname, 'cross-encoder.worker.js');
  return existsSync(beside) ? beside : join(__dirname, '..', 'dist', 'cross-encoder.worker.js');
}
