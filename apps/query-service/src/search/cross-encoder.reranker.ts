import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { offlineTransformers } from '@kb/embeddings';
import { Logger } from '@nestjs/common';

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

  /** Undefined when the model folder is absent: reranking is then skipped, and says so. */
  static async loadIfPresent(options: CrossEncoderOptions): Promise<Reranker | undefined> {
    const folder = join(options.modelDir, options.model);
    if (!existsSync(join(folder, 'config.json'))) {
      new Logger(CrossEncoderReranker.name).warn(
        `no reranker model in ${folder}; rerank requests will be answered "skipped: no_reranker_model"`,
      );
      return undefined;
    }
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
