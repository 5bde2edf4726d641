import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { type TokenCounter, wordCounter } from './token.counter';

export interface ModelTokenizerOptions {
  /** Folder holding `<model>/tokenizer.json` and `tokenizer_config.json` (EMBEDDING_MODEL_DIR). */
  modelDir: string;
  /** Model id, the sub-folder of `modelDir`, e.g. `all-MiniLM-L6-v2`. */
  model: string;
}

interface Tokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
}

/** Short pieces (words) seen again are not re-tokenized; the cache is dropped whole when full. */
const PIECE_CACHE_LIMIT = 100_000;
const CACHED_PIECE_CHARS = 64;

/**
 * Token counts from the embedding model's own tokenizer (transformers.js), loaded offline from the
 * folder scripts/infra/fetch-model.sh fills, so chunk sizes match what the model reads.
 */
export class ModelTokenCounter implements TokenCounter {
  private readonly pieces = new Map<string, number>();

  private constructor(
    readonly unit: string,
    private readonly tokenizer: Tokenizer,
  ) {}

  static async load(options: ModelTokenizerOptions): Promise<ModelTokenCounter> {
    const transformers = await import('@huggingface/transformers');
    transformers.env.allowRemoteModels = false;
    transformers.env.allowLocalModels = true;
    transformers.env.localModelPath = options.modelDir.endsWith('/')
      ? options.modelDir
      : `${options.modelDir}/`;
    const tokenizer = await transformers.AutoTokenizer.from_pretrained(options.model);
    return new ModelTokenCounter(options.model, tokenizer);
  }

  count(text: string): number {
    return this.tokenizer.encode(text).length;
  }

  countPiece(text: string): number {
    const cached = this.pieces.get(text);
    if (cached !== undefined) return cached;
    const count = this.tokenizer.encode(text, { add_special_tokens: false }).length;
    if (text.length <= CACHED_PIECE_CHARS) {
      if (this.pieces.size >= PIECE_CACHE_LIMIT) this.pieces.clear();
      this.pieces.set(text, count);
    }
    return count;
  }
}

/**
 * The model's tokenizer when its folder exists (a folder that does not load is an error: counts
 * would silently change), otherwise the word estimate, with a warning.
 */
export async function loadTokenCounter(
  options: Partial<ModelTokenizerOptions>,
  warn: (message: string) => void,
): Promise<TokenCounter> {
  const { modelDir, model } = options;
  if (modelDir && model && existsSync(join(modelDir, model, 'tokenizer.json'))) {
    return ModelTokenCounter.load({ modelDir, model });
  }
  warn(
    `no tokenizer at EMBEDDING_MODEL_DIR/${model ?? '?'}/tokenizer.json: token counts and the token chunker use the word estimate`,
  );
  return wordCounter;
}
