import { join } from 'node:path';

import { offlineTransformers } from '@kb/embeddings';
import { InferenceSession, Tensor } from 'onnxruntime-node';

import { type LatencySummary, percentile } from './latency';

export interface ReferenceModelOptions {
  /** EMBEDDING_MODEL_DIR: `<dir>/<model>/tokenizer.json` and `onnx/<file>`. */
  dir: string;
  model: string;
  pooling: 'mean' | 'cls';
  /** `q8` reads `onnx/model_quantized.onnx` (the services' default), `fp32` `onnx/model.onnx`. */
  dtype?: 'q8' | 'fp32';
}

type Encoded = { data: ArrayLike<bigint> | BigInt64Array; dims: number[] };
type Tokenizer = (
  texts: string[],
  options: { padding: boolean; truncation: boolean },
) => Record<'input_ids' | 'attention_mask' | 'token_type_ids', Encoded>;

/**
 * The embedding model run directly by onnxruntime-node, outside the services: the independent
 * reference the benchmarks compare the pipeline and the query path with (issue 16). Only the
 * tokenizer comes from transformers.js (the same `tokenizer.json` the services read); the graph
 * runs in an `InferenceSession` of its own, pooled and normalized here.
 */
export class ReferenceModel {
  private constructor(
    private readonly tokenizer: Tokenizer,
    private readonly session: InferenceSession,
    private readonly pooling: 'mean' | 'cls',
  ) {}

  static async load(options: ReferenceModelOptions, threads: number): Promise<ReferenceModel> {
    const transformers = await offlineTransformers(options.dir);
    const tokenizer = (await transformers.AutoTokenizer.from_pretrained(
      options.model,
    )) as unknown as Tokenizer;
    const file = options.dtype === 'fp32' ? 'model.onnx' : 'model_quantized.onnx';
    const session = await InferenceSession.create(join(options.dir, options.model, 'onnx', file), {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      enableCpuMemArena: false,
    });
    return new ReferenceModel(tokenizer, session, options.pooling);
  }

  /** Unit-length vectors of `texts`, one padded batch. */
  async embed(texts: string[]): Promise<Float32Array[]> {
    const encoded = this.tokenizer(texts, { padding: true, truncation: true });
    const feeds: Record<string, Tensor> = {};
    for (const name of this.session.inputNames) {
      const input = encoded[name as keyof typeof encoded];
      if (!input) throw new Error(`the tokenizer gives no ${name}`);
      feeds[name] = new Tensor('int64', BigInt64Array.from(input.data as ArrayLike<bigint>), [
        ...input.dims,
      ]);
    }
    const output = await this.session.run(feeds);
    const hidden = output[this.session.outputNames[0]!]!;
    const [batch, length, width] = hidden.dims as [number, number, number];
    const values = hidden.data as Float32Array;
    const mask = encoded.attention_mask.data;
    const vectors: Float32Array[] = [];
    for (let b = 0; b < batch; b++) {
      const vector = new Float32Array(width);
      let count = 0;
      for (let t = 0; t < (this.pooling === 'cls' ? 1 : length); t++) {
        if (Number(mask[b * length + t]) === 0) continue;
        count++;
        const offset = (b * length + t) * width;
        for (let d = 0; d < width; d++) vector[d]! += values[offset + d]!;
      }
      let norm = 0;
      for (let d = 0; d < width; d++) {
        vector[d]! /= Math.max(count, 1);
        norm += vector[d]! * vector[d]!;
      }
      norm = Math.sqrt(norm) || 1;
      for (let d = 0; d < width; d++) vector[d]! /= norm;
      vectors.push(vector);
    }
    return vectors;
  }

  /** Tokens per text after truncation (what the model reads), for sorting batches by length. */
  tokens(text: string): number {
    return this.tokenizer([text], { padding: false, truncation: true }).input_ids.dims[1] ?? 0;
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

/** p50 / p95 of embedding `texts` one at a time with one session of `threads` threads. */
async function oneAtATime(
  options: ReferenceModelOptions,
  texts: string[],
  threads: number,
): Promise<Pick<LatencySummary, 'p50_ms' | 'p95_ms' | 'qps'>> {
  const model = await ReferenceModel.load(options, threads);
  try {
    for (const text of texts.slice(0, 5)) await model.embed([text]); // warm-up
    const latencies: number[] = [];
    const started = performance.now();
    for (const text of texts) {
      const t0 = performance.now();
      await model.embed([text]);
      latencies.push(performance.now() - t0);
    }
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      p50_ms: round2(percentile(latencies, 50)),
      p95_ms: round2(percentile(latencies, 95)),
      qps: round2(texts.length / seconds),
    };
  } finally {
    await model.close();
  }
}

/**
 * Throughput of `workers` sessions of one thread each taking `batches` in turn (both cores of a
 * two-core machine busy at once); returns texts per second.
 */
async function parallelSessions(
  options: ReferenceModelOptions,
  batches: string[][],
  workers: number,
): Promise<number> {
  const models = await Promise.all(
    Array.from({ length: workers }, () => ReferenceModel.load(options, 1)),
  );
  try {
    for (const model of models) await model.embed(batches[0]!.slice(0, 1)); // warm-up
    let next = 0;
    const started = performance.now();
    await Promise.all(
      models.map(async (model) => {
        while (next < batches.length) await model.embed(batches[next++]!);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    return batches.reduce((sum, batch) => sum + batch.length, 0) / seconds;
  } finally {
    await Promise.all(models.map((model) => model.close()));
  }
}

export interface EmbedFloor {
  /** One query at a time, one session of two threads: the floor under a cache miss at c1. */
  p50_ms: number;
  p95_ms: number;
  /** Queries per second with both cores busy: two one-thread sessions embedding one query each. */
  qps: number;
  one_thread: { p50_ms: number; p95_ms: number };
  two_threads_qps: number;
}

/** The query-embedding floor: the same model embedding the same queries, outside the services. */
export async function embedFloor(
  options: ReferenceModelOptions,
  queries: string[],
): Promise<EmbedFloor> {
  const two = await oneAtATime(options, queries, 2);
  const one = await oneAtATime(options, queries, 1);
  const qps = await parallelSessions(
    options,
    queries.map((q) => [q]),
    2,
  );
  return {
    p50_ms: two.p50_ms,
    p95_ms: two.p95_ms,
    qps: round2(qps),
    one_thread: { p50_ms: one.p50_ms, p95_ms: one.p95_ms },
    two_threads_qps: two.qps,
  };
}

/** How the reference groups texts into runs: as `BatchingEmbeddingProvider` does (docs/adr/0029). */
export interface ReferenceBatching {
  /** Texts per run at most. */
  maxBatch: number;
  /** A run's padded size at most, in tokens (texts × the longest). */
  maxBatchTokens: number;
}

/**
 * Texts sorted by token length, cut into runs of at most `maxBatch` texts whose count times their
 * longest stays within `maxBatchTokens` (a text past the budget runs alone).
 */
export function referenceBatches(
  texts: string[],
  tokens: (text: string) => number,
  batching: ReferenceBatching,
): string[][] {
  const sorted = texts
    .map((text) => ({ text, tokens: tokens(text) }))
    .sort((a, b) => a.tokens - b.tokens);
  const batches: string[][] = [];
  let batch: string[] = [];
  for (const { text, tokens: length } of sorted) {
    const fits =
      batch.length < batching.maxBatch && (batch.length + 1) * length <= batching.maxBatchTokens;
    if (batch.length > 0 && !fits) {
      batches.push(batch);
      batch = [];
    }
    batch.push(text);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

export interface ReferenceIngest {
  /** The better of the two ways to use both cores, below. */
  reference_chunks_per_s: number;
  /** One session of two threads, batches sorted by length. */
  two_threads_chunks_per_s: number;
  /** Two sessions of one thread each, batches sorted by length. */
  two_sessions_chunks_per_s: number;
}

/**
 * Ingest's reference: the same chunks embedded by the model alone, sorted by token length (so a
 * batch pads little) in the services' batch sizes (`referenceBatches`), with both cores.
 */
export async function referenceIngest(
  options: ReferenceModelOptions,
  texts: string[],
  batching: ReferenceBatching,
): Promise<ReferenceIngest> {
  const counter = await ReferenceModel.load(options, 1);
  const lengths = new Map(texts.map((text) => [text, counter.tokens(text)]));
  await counter.close();
  const batches = referenceBatches(texts, (text) => lengths.get(text)!, batching);
  const twoThreads = await (async () => {
    const model = await ReferenceModel.load(options, 2);
    try {
      await model.embed(batches[0]!.slice(0, 1));
      const started = performance.now();
      for (const batch of batches) await model.embed(batch);
      return texts.length / ((performance.now() - started) / 1000);
    } finally {
      await model.close();
    }
  })();
  const twoSessions = await parallelSessions(options, batches, 2);
  const round1 = (x: number): number => Math.round(x * 10) / 10;
  return {
    reference_chunks_per_s: round1(Math.max(twoThreads, twoSessions)),
    two_threads_chunks_per_s: round1(twoThreads),
    two_sessions_chunks_per_s: round1(twoSessions),
  };
}

/** The short queries: the first 12 words of each. */
export const shortQuery = (query: string): string => query.split(/\s+/).slice(0, 12).join(' ');
