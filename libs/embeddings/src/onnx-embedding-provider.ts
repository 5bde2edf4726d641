import type { EmbeddingProvider } from './embedding-provider';
import { onnxModelSpec } from './model-catalog';

export interface OnnxEmbeddingOptions {
  /** Folder holding `<model>/config.json`, `tokenizer.json`, `onnx/model_quantized.onnx`. */
  modelDir: string;
  /** Model id, the sub-folder of `modelDir`, e.g. `all-MiniLM-L6-v2`. */
  model: string;
  /** Default: the catalogue's (model-catalog.ts), else mean. */
  pooling?: 'mean' | 'cls' | undefined;
  /** Default: the catalogue's, else none. */
  queryPrefix?: string;
  /** Default: the catalogue's, else none. */
  passagePrefix?: string;
  /** `q8` loads `onnx/model_quantized.onnx`, `fp32` loads `onnx/model.onnx`. */
  dtype?: 'q8' | 'fp32';
  /** onnxruntime intra-op threads; keep small on shared nodes. */
  threads?: number;
}

type FeatureExtractor = (
  texts: string[],
  options: { pooling: 'mean' | 'cls'; normalize: boolean },
) => Promise<{ tolist(): number[][]; dims: number[] }>;
/** The pipeline's tokenizer, as far as counting goes: ids with the special tokens, truncated. */
type TokenCounter = (text: string) => number;

/**
 * A local sentence-embedding model run by onnxruntime through transformers.js, loaded offline
 * from a folder the project's setup fills (see scripts/infra/fetch-model.sh).
 */
export class OnnxEmbeddingProvider implements EmbeddingProvider {
  private constructor(
    readonly model: string,
    readonly dimension: number,
    private readonly extractor: FeatureExtractor,
    private readonly pooling: 'mean' | 'cls',
    private readonly dispose: () => Promise<void>,
    private readonly tokensOf: TokenCounter,
    private readonly prefixes: { query: string; passage: string },
  ) {}

  static async load(options: OnnxEmbeddingOptions): Promise<OnnxEmbeddingProvider> {
    const transformers = await offlineTransformers(options.modelDir);
    const extractor = await transformers.pipeline('feature-extraction', options.model, {
      dtype: options.dtype ?? 'q8',
      session_options: {
        intraOpNumThreads: options.threads ?? 1,
        interOpNumThreads: 1,
        enableCpuMemArena: false,
        // Idle intra-op threads sleep instead of spinning: on shared cores a spinning pool
        // burns the CPU the rest of the service needs between runs (docs/adr/0029).
        extra: { session: { intra_op: { allow_spinning: '0' } } },
      },
    });
    const spec = onnxModelSpec(options.model);
    const pooling = options.pooling ?? spec?.pooling ?? 'mean';
    const run = extractor as unknown as FeatureExtractor;
    const probe = await run(['dimension probe'], { pooling, normalize: true });
    const dimension = probe.dims[probe.dims.length - 1] ?? 0;
    // What the model reads: the pipeline truncates to the tokenizer's model_max_length.
    const tokensOf: TokenCounter = (text) =>
      extractor.tokenizer.encode(text).slice(0, extractor.tokenizer.model_max_length).length;
    return new OnnxEmbeddingProvider(
      options.model,
      dimension,
      run,
      pooling,
      () => extractor.dispose(),
      tokensOf,
      {
        query: options.queryPrefix ?? spec?.queryPrefix ?? '',
        passage: options.passagePrefix ?? spec?.passagePrefix ?? '',
      },
    );
  }

  /** Passages (chunks), with the model's passage prefix. */
  async embed(texts: string[]): Promise<number[][]> {
    return this.run(texts.map((text) => this.prefixes.passage + text));
  }

  /** Search queries, with the model's query prefix. */
  async embedQueries(texts: string[]): Promise<number[][]> {
    return this.run(texts.map((text) => this.prefixes.query + text));
  }

  private async run(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const output = await this.extractor(texts, { pooling: this.pooling, normalize: true });
    return output.tolist();
  }

  async countTokens(texts: string[]): Promise<number> {
    return texts.reduce((sum, text) => sum + this.tokensOf(this.prefixes.passage + text), 0);
  }

  async close(): Promise<void> {
    await this.dispose();
  }
}

/**
 * transformers.js set to load models only from `modelDir` (`<modelDir>/<model id>/`), never from
 * a model hub: models are fetched by the project's setup, offline at run time.
 */
export async function offlineTransformers(
  modelDir: string,
): Promise<typeof import('@huggingface/transformers', { with: { 'resolution-mode': 'import' } })> {
  const transformers = await import('@huggingface/transformers');
  transformers.env.allowRemoteModels = false;
  transformers.env.allowLocalModels = true;
  transformers.env.localModelPath = modelDir.endsWith('/') ? modelDir : `${modelDir}/`;
  return transformers;
}
