import type { SentenceChunkerConfig } from '@kb/contracts';

import { assertSizes, splitSpan } from './recursive.chunker';
import { sentenceSpans } from './sentence.segmenter';
import { packPieces, type Span, trimSpan } from './spans.util';

export type SentenceOptions = Pick<SentenceChunkerConfig, 'size' | 'overlap'>;

/**
 * Whole sentences packed into chunks of at most `size` characters. The overlap is a character
 * budget filled with whole trailing sentences of the previous chunk only. A sentence longer than
 * `size` is cut at words (a word longer than that, at characters) and its parts packed like
 * sentences; an overlap never starts inside it.
 */
export function sentenceChunkSpans(
  text: string,
  options: SentenceOptions,
  within: Span = { start: 0, end: text.length },
): Span[] {
  const { size, overlap } = options;
  assertSizes(size, overlap);
  const sentenceStarts = new Set<number>();
  const pieces: Span[] = [];
  for (const sentence of sentenceSpans(text, within)) {
    const trimmed = trimSpan(text, sentence);
    if (trimmed.end === trimmed.start) continue;
    sentenceStarts.add(trimmed.start);
    for (const part of splitSpan(text, trimmed, size, [' ', ''])) {
      const piece = trimSpan(text, part);
      if (piece.end > piece.start) pieces.push(piece);
    }
  }
  return packPieces(pieces, {
    size,
    overlap,
    overlapMayStartAt: (piece) => sentenceStarts.has(piece.start),
  });
}
