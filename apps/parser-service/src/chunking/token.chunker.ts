import type { TokenChunkerConfig } from '@kb/contracts';

import { assertSizes } from './recursive.chunker';
import { segmentSpans } from './segments.util';
import { safeCut, type Span } from './spans.util';
import type { TokenCounter } from './token.counter';
import { yieldEvery } from './yield.util';

export type TokenOptions = Pick<TokenChunkerConfig, 'size' | 'overlap'>;

/** A token chunk: its span and its token count, measured on the chunk's own text. */
export interface CountedSpan extends Span {
  tokenCount: number;
}

/**
 * No chunk is longer than this many characters per token of `size`, so a run the model reads as
 * one unknown token (a base64 blob, say) cannot make a chunk unbounded.
 */
export const MAX_CHARS_PER_TOKEN = 8;

interface Atom extends Span {
  tokens: number;
}

/**
 * Words packed into chunks of at most `size` model tokens, counted as the model sees the chunk
 * (special tokens included), overlapping by at most `overlap` tokens of whole words. A word longer
 * than a chunk is cut at characters. Word counts are summed to pack, then every chunk is counted
 * on its own text and shrunk a word at a time if the sum was short, so the bound is exact for any
 * tokenizer; offsets are word offsets, so `text.slice(start, end)` is the chunk.
 */
export async function tokenChunkSpans(
  text: string,
  options: TokenOptions,
  tokens: TokenCounter,
): Promise<CountedSpan[]> {
  const { size, overlap } = options;
  assertSizes(size, overlap);
  const special = tokens.count('');
  if (size - special < 1) throw new Error(`size must exceed the ${special} special tokens`);
  const maxChars = size * MAX_CHARS_PER_TOKEN;
  const atoms = new Atoms(text, (start, end) =>
    splitWord(text, { start, end }, size - special, maxChars, tokens),
  );
  const countSpan = (from: number, to: number): number =>
    tokens.count(text.slice(atoms.at(from)!.start, atoms.at(to - 1)!.end));
  const pause = yieldEvery(16);

  const chunks: CountedSpan[] = [];
  let first = 0;
  let fresh = 0; // the first atom no earlier chunk holds
  while (atoms.at(fresh)) {
    let end = first;
    let sum = special;
    for (let atom = atoms.at(end); atom; atom = atoms.at(end)) {
      if (sum + atom.tokens > size || atom.end - atoms.at(first)!.start > maxChars) break;
      sum += atom.tokens;
      end++;
    }
    end = Math.max(end, fresh + 1);
    // The sum is an estimate: count the chunk itself and, while it is too long, drop new words
    // beyond the first, then overlapping ones.
    let count = countSpan(first, end);
    while (count > size && end - first > 1) {
      if (end - 1 > fresh) end--;
      else first++;
      count = countSpan(first, end);
    }
    chunks.push({ start: atoms.at(first)!.start, end: atoms.at(end - 1)!.end, tokenCount: count });
    fresh = end;
    const next = atoms.at(fresh);
    if (!next) break;
    // The next chunk starts with the last words of this one (never all of them) that fit the
    // overlap and leave room for the next new word.
    let start = end;
    let carried = 0;
    while (start - 1 > first) {
      const atom = atoms.at(start - 1)!;
      if (
        carried + atom.tokens > overlap ||
        special + carried + atom.tokens + next.tokens > size ||
        next.end - atom.start > maxChars
      ) {
        break;
      }
      carried += atom.tokens;
      start--;
    }
    // Sums are estimates here too: the overlap, counted as it is, must fit.
    while (
      start < end &&
      tokens.countPiece(text.slice(atoms.at(start)!.start, atoms.at(end - 1)!.end)) > overlap
    ) {
      start++;
    }
    first = start;
    atoms.release(first);
    await pause();
  }
  return chunks;
}

/**
 * The text's atoms (words, or parts of words too long for a chunk) by index, made as they are
 * first asked for and forgotten once released, so a large document never holds them all.
 */
class Atoms {
  private readonly words: IterableIterator<RegExpMatchArray>;
  private buffer: Atom[] = [];
  private offset = 0;

  constructor(
    text: string,
    private readonly split: (start: number, end: number) => Atom[],
  ) {
    this.words = text.matchAll(/\S+/g);
  }

  at(index: number): Atom | undefined {
    while (index - this.offset >= this.buffer.length) {
      const word = this.words.next();
      if (word.done) return undefined;
      this.buffer.push(...this.split(word.value.index!, word.value.index! + word.value[0].length));
    }
    return this.buffer[index - this.offset];
  }

  /** Atoms before `index` are not asked for again. */
  release(index: number): void {
    if (index - this.offset < 4096) return;
    this.buffer = this.buffer.slice(index - this.offset);
    this.offset = index;
  }
}

/**
 * A word of more tokens than this is split at the word boundaries inside it (CJK words,
 * punctuation), so that chunks fill up to their size instead of stopping short of a big word.
 */
const SMALL_WORD_TOKENS = 8;
const words = new Intl.Segmenter('en', { granularity: 'word' });

/**
 * A word as one atom; a word of many tokens as the words inside it (by Intl.Segmenter); one that
 * still has more tokens than a chunk holds, or more characters than a chunk may have, as
 * consecutive parts that fit, cut at grapheme boundaries.
 */
function splitWord(
  text: string,
  span: Span,
  budget: number,
  maxChars: number,
  tokens: TokenCounter,
): Atom[] {
  const { start, end } = span;
  const fits = (from: number, to: number): number | undefined => {
    if (to - from > maxChars) return undefined;
    const count = tokens.countPiece(text.slice(from, to));
    return count <= budget ? count : undefined;
  };
  const whole = fits(start, end);
  if (whole !== undefined && whole <= SMALL_WORD_TOKENS) return [{ start, end, tokens: whole }];
  const inner = [...segmentSpans(words, text, span)];
  if (inner.length > 1) {
    return inner.flatMap((part) => splitWord(text, part, budget, maxChars, tokens));
  }
  if (whole !== undefined) return [{ start, end, tokens: whole }];
  const atoms: Atom[] = [];
  let from = start;
  while (from < end) {
    // The longest prefix that fits (binary search), moved back to a grapheme boundary.
    let low = from + 1;
    let high = Math.min(end, from + maxChars);
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (fits(from, middle) !== undefined) low = middle;
      else high = middle - 1;
    }
    const to = low >= end ? end : safeCut(text, low, from);
    atoms.push({ start: from, end: to, tokens: tokens.countPiece(text.slice(from, to)) });
    from = to;
  }
  return atoms;
}
