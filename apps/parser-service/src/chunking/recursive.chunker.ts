import type { RecursiveChunkerConfig } from '@kb/contracts';

import { hardCut, packPieces, type Span, trimSpans } from './spans.util';

/** Paragraph, line, sentence, word, then a hard cut. */
export const DEFAULT_SEPARATORS = ['\n\n', '\n', '. ', ' ', ''];

export type RecursiveOptions = Pick<RecursiveChunkerConfig, 'size' | 'overlap' | 'separators'>;

/**
 * Recursive character chunking on offsets, never on copied strings, so every chunk is exactly
 * `text.slice(start, end)`, overlap included: a span longer than `size` is split after each
 * occurrence of the first separator it contains, and pieces still too long are split by the next
 * ones; the pieces are then packed into chunks of at most `size` characters that start with at
 * most `overlap` characters of the previous chunk's last pieces.
 */
export function recursiveChunkSpans(
  text: string,
  options: RecursiveOptions,
  within: Span = { start: 0, end: text.length },
): Span[] {
  const { size, overlap } = options;
  assertSizes(size, overlap);
  const separators = [...(options.separators ?? DEFAULT_SEPARATORS).filter((s) => s !== ''), ''];
  const pieces = trimSpans(text, splitSpan(text, within, size, separators));
  return packPieces(pieces, { size, overlap });
}

export function assertSizes(size: number, overlap: number): void {
  if (!Number.isInteger(size) || size <= 0) throw new Error('size must be a positive integer');
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= size) {
    throw new Error('overlap must be an integer in [0, size)');
  }
}

/** Splits a span into contiguous pieces no longer than `size`, separators kept at piece ends. */
export function splitSpan(text: string, span: Span, size: number, separators: string[]): Span[] {
  if (span.end - span.start <= size) return [span];
  const slice = text.slice(span.start, span.end);
  const index = separators.findIndex((sep) => sep === '' || slice.includes(sep));
  const separator = separators[index] ?? '';
  if (separator === '') return hardCut(text, span, size);
  const rest = separators.slice(index + 1);
  const parts: Span[] = [];
  // Searched within the span's own text, so a separator that never comes again is not looked
  // for through the rest of the document, once per span.
  let start = 0;
  while (start < slice.length) {
    const found = slice.indexOf(separator, start);
    const end = found === -1 ? slice.length : found + separator.length;
    parts.push({ start: span.start + start, end: span.start + end });
    start = end;
  }
  return parts.flatMap((part) => splitSpan(text, part, size, rest));
}
