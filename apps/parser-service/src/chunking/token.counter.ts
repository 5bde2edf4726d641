/**
 * Counts tokens the way the embedding model will see a text. The service uses the model's own
 * tokenizer (`ModelTokenCounter`); unit tests, and a parser started without the model folder, use
 * the whitespace word estimate.
 */
export interface TokenCounter {
  /** What the counts are in: the model id, or `words` for the estimate. */
  readonly unit: string;
  /** Tokens of `text` fed to the model on its own, special tokens (`[CLS]`, `[SEP]`) included. */
  count(text: string): number;
  /** Tokens `text` adds as a part of a longer text: no special tokens. */
  countPiece(text: string): number;
}

/** Whitespace-delimited words: an estimate that needs no model. */
export const wordCounter: TokenCounter = {
  unit: 'words',
  count: (text) => countWords(text),
  countPiece: (text) => countWords(text),
};

function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}
