import { offlineTransformers } from './onnx-embedding-provider';

export interface CrossEncoderOptions {
  /** Folder holding `<model>/config.json`, `tokenizer.json` and `onnx/model.onnx`. */
  modelDir: string;
  /** Sub-folder of `modelDir`, e.g. `ms-marco-MiniLM-L-12-v2`. */
  model: string;
  /** `fp32` loads `onnx/model.onnx`, `q8` loads `onnx/model_quantized.onnx`. */
  dtype?: 'fp32' | 'q8';
  /** onnxruntime's intra-op threads for one run. */
  threads?: number;
  /** Pairs per model call. */
  batchSize?: number;
  /** A pair is cut to this many tokens (query, passage and the three special tokens). */
  maxTokens?: number;
}

interface Tensor {
  tolist(): number[][];
}
type Tokenizer = (
  texts: string[],
  options: { text_pair: string[]; padding: boolean; truncation: boolean; max_length?: number },
) => Record<string, unknown>;
type SequenceClassifier = ((inputs: Record<string, unknown>) => Promise<{ logits: Tensor }>) & {
  dispose(): Promise<unknown>;
};

/**
 * A cross-encoder (a BERT sequence classifier over "[CLS] query [SEP] passage [SEP]", such as an
 * ONNX export of ms-marco-MiniLM-L-12-v2) run by onnxruntime through transformers.js, loaded
 * offline from a folder like the embedding model. It reads query and passage together, so it
 * ranks better than comparing two independent embeddings, at the cost of one model pass per
 * pair. onnxruntime-node runs synchronously on the calling thread: services run it in a worker
 * (`CrossEncoderWorkerPool`), never on their event loop.
 */
export class CrossEncoderModel {
  private constructor(
    readonly model: string,
    private readonly tokenizer: Tokenizer,
    private readonly classifier: SequenceClassifier,
    private readonly batchSize: number,
    private readonly maxTokens: number | undefined,
  ) {}

  static async load(options: CrossEncoderOptions): Promise<CrossEncoderModel> {
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
          // As for the embedding model: idle intra-op threads sleep rather than spin.
          extra: { session: { intra_op: { allow_spinning: '0' } } },
        },
      },
    );
    return new CrossEncoderModel(
      options.model,
      tokenizer as unknown as Tokenizer,
      classifier as unknown as SequenceClassifier,
      options.batchSize ?? 16,
      options.maxTokens,
    );
  }

  /** One relevance logit per (query, passage) pair; higher is more relevant. */
  async score(query: string, passages: string[]): Promise<number[]> {
    const scores: number[] = [];
    for (let i = 0; i < passages.length; i += this.batchSize) {
      const batch = passages.slice(i, i + this.batchSize);
      const inputs = this.tokenizer(
        batch.map(() => query),
        {
          text_pair: batch,
          padding: true,
          truncation: true,
          ...(this.maxTokens ? { max_length: this.maxTokens } : {}),
        },
      );
      const { logits } = await this.classifier(inputs);
      scores.push(...logits.tolist().map((row) => row[0] ?? Number.NEGATIVE_INFINITY));
    }
    return scores;
  }

  async close(): Promise<void> {
    await this.classifier.dispose();
  }
}
