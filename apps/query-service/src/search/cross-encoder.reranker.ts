import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { offlineTransformers } from '@kb/embeddings';

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
  return CrossEncoderReranker.load({ modelDir, model: settings.RERANKER_MODEL });
}

/** Scores (query, passage) pairs; higher is more relevant. */
export interface Reranker {
  readonly model: string;
  score(query: string, passages: string[]): Promise<number[]>;
  close(): Promise<void>;
}

export interface CrossEncoderOptions {
  /** Folder holding `<model>/config.json`, `tokenizer.json` and `onnx/model.onnx`. */
  modelDir: string;
  /** Sub-folder of `modelDir`, e.g. `ms-marco-MiniLM-L-6-v2`. */
  model: string;
  /** `fp32` loads `onnx/model.onnx`, `q8` loads `onnx/model_quantized.onnx`. */
  dtype?: 'fp32' | 'q8';
  threads?: number;
  /** Pairs per model call. */
  batchSize?: number;
}

interface Tensor {
  tolist(): number[][];
}
type Tokenizer = (
  texts: string[],
  options: { text_pair: string[]; padding: boolean; truncation: boolean },
) => Record<string, unknown>;
type SequenceClassifier = ((inputs: Record<string, unknown>) => Promise<{ logits: Tensor }>) & {
  dispose(): Promise<unknown>;
};

/**
 * A cross-encoder (a BERT sequence classifier over "[CLS] query [SEP] passage [SEP]", such as an
 * ONNX export of ms-marco-MiniLM-L-6-v2) run by onnxruntime through transformers.js, loaded
 * offline from a folder like the embedding model. It reads query and passage together, so it
 * ranks better than comparing two independent embeddings, at the cost of one model pass per
 * candidate: only the top candidates are reranked.
 */
export class CrossEncoderReranker implements Reranker {
  private constructor(
    readonly model: string,
    private readonly tokenizer: Tokenizer,
    private readonly classifier: SequenceClassifier,
    private readonly batchSize: number,
  ) {}

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
    try {
      return await CrossEncoderReranker.loadFrom(options);
    } catch (error) {
      throw new CrossEncoderLoadError(
        `RERANKER_MODEL=${options.model} in ${folder} failed to load: ${String(error)}`,
        { cause: error },
      );
    }
  }

  private static async loadFrom(options: CrossEncoderOptions): Promise<Reranker> {
    const transformers = await offlineTransformers(options.modelDir);
    const tokenizer = await transformers.AutoTokenizer.from_pretrained(options.model);
    const classifier = await transformers.AutoModelForSequenceClassification.from_pretrained(
      options.model,
      {
        dtype: options.dtype ?? 'fp32',
        session_options: {
          intraOpNumThreads: options.threads ?? 1,
          interOpNumThreads: 1,
          enableCpuMemArena: false,
        },
      },
    );
    return new CrossEncoderReranker(
      options.model,
      tokenizer as unknown as Tokenizer,
      classifier as unknown as SequenceClassifier,
      options.batchSize ?? 16,
    );
  }

  async score(query: string, passages: string[]): Promise<number[]> {
    const scores: number[] = [];
    for (let i = 0; i < passages.length; i += this.batchSize) {
      const batch = passages.slice(i, i + this.batchSize);
      const inputs = this.tokenizer(
        batch.map(() => query),
        { text_pair: batch, padding: true, truncation: true },
      );
      const { logits } = await this.classifier(inputs);
      // One relevance logit per pair.
      scores.push(...logits.tolist().map((row) => row[0] ?? Number.NEGATIVE_INFINITY));
    }
    return scores;
  }

  async close(): Promise<void> {
    await this.classifier.dispose();
  }
}
