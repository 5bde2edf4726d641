import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { type CrossEncoderOptions, CrossEncoderWorkerPool } from '@kb/embeddings';

import { PairCost } from './rerank.cost';

/** A configured cross-encoder that cannot be loaded: the service must not start. */
export class CrossEncoderLoadError extends Error {
  override readonly name = 'CrossEncoderLoadError';
}

/** What `/health/ready` and `GET /v1/models` tell about the cross-encoder. */
export interface CrossEncoderState {
  /** RERANKER_MODEL is set. */
  configured: boolean;
  /** The model is in memory (always equal to `configured` once booted: see `load`). */
  loaded: boolean;
  model: string | null;
}

export const crossEncoderStateOf = (reranker: Reranker | null): CrossEncoderState => ({
  configured: reranker !== null,
  loaded: reranker !== null,
  model: reranker?.model ?? null,
});

/** Settings as query-service's config names them. */
export interface CrossEncoderSettings {
  RERANKER_MODEL?: string | undefined;
  RERANKER_MODEL_DIR?: string | undefined;
  EMBEDDING_MODEL_DIR?: string | undefined;
  RERANK_THREADS?: number | undefined;
  RERANK_MAX_TOKENS?: number | undefined;
}

/** RERANKER_MODEL's value that turns the cross-encoder off (`npm start` loads one by default). */
export const NO_RERANKER = 'none';

/**
 * The configured cross-encoder, null when RERANKER_MODEL is unset or `none`; throws
 * CrossEncoderLoadError when it is set and cannot be loaded (no folder to look in, no model
 * there, a broken model).
 */
export async function crossEncoderFromConfig(
  settings: CrossEncoderSettings,
): Promise<Reranker | null> {
  if (!settings.RERANKER_MODEL || settings.RERANKER_MODEL === NO_RERANKER) return null;
  const modelDir = settings.RERANKER_MODEL_DIR ?? settings.EMBEDDING_MODEL_DIR;
  if (!modelDir) {
    throw new CrossEncoderLoadError(
      `RERANKER_MODEL=${settings.RERANKER_MODEL} is configured but no folder holds it: set RERANKER_MODEL_DIR (or EMBEDDING_MODEL_DIR)`,
    );
  }
  return CrossEncoderReranker.load({
    modelDir,
    model: settings.RERANKER_MODEL,
    threads: settings.RERANK_THREADS,
    maxTokens: settings.RERANK_MAX_TOKENS,
  });
}

/** Scores (query, passage) pairs; higher is more relevant. */
export interface Reranker {
  readonly model: string;
  /**
   * What one pair costs, in milliseconds: measured when the model loads, then a moving average
   * of the runs (waits for the model included), so the rerank budget's depth follows the load;
   * relaxing toward the lowest cost measured while nothing runs (`PairCost`).
   */
  readonly msPerPair: number;
  score(query: string, passages: string[]): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * Pairs of a calibration run at load; the fastest of three runs counts (the first warms up, and a
 * machine busy starting the other services makes the others slow: a low first estimate is
 * corrected by the first reranks, a high one only slowly, `PairCost`).
 */
const CALIBRATION_PAIRS = 4;
const CALIBRATION_RUNS = 3;

/**
 * The cross-encoder behind `rerank: true` and `/v1/rerank`: the model runs in a worker thread of
 * its own (`CrossEncoderWorkerPool`, docs/adr/0047), and its cost per pair is kept for the
 * rerank step's budget.
 */
export class CrossEncoderReranker implements Reranker {
  private readonly cost: PairCost;

  private constructor(
    private readonly pool: CrossEncoderWorkerPool,
    calibrated: number,
  ) {
    this.cost = new PairCost(calibrated);
  }

  get model(): string {
    return this.pool.model;
  }

  get msPerPair(): number {
    return this.cost.msPerPair;
  }

  /**
   * Loads the model, or fails with a message naming the setting and the folder: a cross-encoder
   * that is configured but cannot be loaded stops the service at boot (ADR 23) rather than
   * answering every rerank "skipped" until someone reads a warning.
   */
  static async load(options: CrossEncoderOptions): Promise<Reranker> {
    const folder = join(options.modelDir, options.model);
    if (!existsSync(join(folder, 'config.json'))) {
      throw new CrossEncoderLoadError(
        `RERANKER_MODEL=${options.model} is configured but ${folder} holds no model (no config.json); install it there or unset RERANKER_MODEL`,
      );
    }
    let pool: CrossEncoderWorkerPool;
    try {
      pool = await CrossEncoderWorkerPool.load(options);
    } catch (error) {
      throw new CrossEncoderLoadError(
        `RERANKER_MODEL=${options.model} in ${folder} failed to load: ${String(error)}`,
        { cause: error },
      );
    }
    return new CrossEncoderReranker(pool, await calibrate(pool, options.maxTokens ?? 256));
  }

  async score(query: string, passages: string[]): Promise<number[]> {
    if (passages.length === 0) return [];
    const started = performance.now();
    const scores = await this.pool.score(query, passages);
    this.cost.record(passages.length, performance.now() - started);
    return scores;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/** Milliseconds per pair of passages as long as the model reads (`maxTokens`). */
async function calibrate(pool: CrossEncoderWorkerPool, maxTokens: number): Promise<number> {
  const passage = Array.from({ length: maxTokens }, (_, i) => `word${i % 97}`).join(' ');
  const passages = Array.from({ length: CALIBRATION_PAIRS }, () => passage);
  let perPair = Number.POSITIVE_INFINITY;
  for (let run = 0; run < CALIBRATION_RUNS; run++) {
    const started = performance.now();
    await pool.score('a calibration query', passages);
    if (run > 0) perPair = Math.min(perPair, (performance.now() - started) / CALIBRATION_PAIRS);
  }
  return perPair;
}
