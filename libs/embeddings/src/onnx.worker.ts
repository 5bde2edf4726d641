import { type OnnxEmbeddingOptions, OnnxEmbeddingProvider } from './onnx-embedding-provider';

/** One model run for a worker thread (onnx-worker-pool.ts). */
export interface OnnxWorkerTask {
  options: OnnxEmbeddingOptions;
  kind: 'passages' | 'queries' | 'tokens' | 'dimension';
  texts: string[];
}

export type OnnxWorkerAnswer =
  { vectors: Float32Array; dimension: number } | { tokens: number } | { dimension: number };

let loaded: Promise<OnnxEmbeddingProvider> | undefined;

/**
 * The worker threads' entry point (the pool loads the compiled file, dist/onnx.worker.js): each
 * thread loads the model once, on its first task, and runs one batch at a time, so a run blocks
 * this thread, never the service's event loop. Vectors go back as one transferable Float32Array.
 */
export default async function runInWorker(task: OnnxWorkerTask): Promise<OnnxWorkerAnswer> {
  loaded ??= OnnxEmbeddingProvider.load(task.options);
  const provider = await loaded;
  if (task.kind === 'dimension') return { dimension: provider.dimension };
  if (task.kind === 'tokens') return { tokens: await provider.countTokens(task.texts) };
  const rows =
    task.kind === 'queries'
      ? await provider.embedQueries(task.texts)
      : await provider.embed(task.texts);
  const dimension = provider.dimension;
  const vectors = new Float32Array(rows.length * dimension);
  rows.forEach((row, i) => vectors.set(row, i * dimension));
  return { vectors, dimension };
}
