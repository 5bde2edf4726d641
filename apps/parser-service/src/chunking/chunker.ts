import { createHash } from 'node:crypto';
import type { Chunk } from '@kb/contracts';

export interface Span {
  start: number;
  end: number;
}

export interface RecursiveChunkerOptions {
  /** Maximum chunk length in characters. */
  chunkSize: number;
  /** Characters of the previous chunk repeated at the start of the next, at most. */
  chunkOverlap: number;
  /** Tried in order; '' means a hard cut. */
  separators?: string[];
}

const DEFAULT_SEPARATORS = ['\n\n', '\n', '. ', ' ', ''];

/**
 * Recursive character chunking that works on offsets, never on copied strings, so every chunk is
 * exactly `text.slice(start, end)`, overlap included.
 */
export function recursiveChunkSpans(text: string, options: RecursiveChunkerOptions): Span[] {
  const { chunkSize, chunkOverlap } = options;
  if (chunkSize <= 0) throw new Error('chunkSize must be positive');
  if (chunkOverlap < 0 || chunkOverlap >= chunkSize) {
    throw new Error('chunkOverlap must be in [0, chunkSize)');
  }
  const pieces = splitSpan(
    text,
    { start: 0, end: text.length },
    chunkSize,
    options.separators ?? DEFAULT_SEPARATORS,
  );
  return trimSpans(text, mergePieces(pieces, chunkSize, chunkOverlap));
}

/** Splits a span into contiguous pieces no longer than `size`, separators kept at piece ends. */
function splitSpan(text: string, span: Span, size: number, separators: string[]): Span[] {
  if (span.end - span.start <= size) return [span];
  const index = separators.findIndex(
    (sep) => sep === '' || text.slice(span.start, span.end).includes(sep),
  );
  const separator = separators[index] ?? '';
  const rest = separators.slice(index + 1);
  const parts: Span[] = [];
  if (separator === '') {
    for (let start = span.start; start < span.end; start += size) {
      parts.push({ start, end: Math.min(start + size, span.end) });
    }
    return parts;
  }
  let start = span.start;
  while (start < span.end) {
    const found = text.indexOf(separator, start);
    const end =
      found === -1 || found >= span.end ? span.end : Math.min(found + separator.length, span.end);
    parts.push({ start, end });
    start = end;
  }
  return parts.flatMap((part) => splitSpan(text, part, size, rest));
}

/** Greedily packs pieces into chunks of at most `size`, starting each chunk with up to `overlap` of the last. */
function mergePieces(pieces: Span[], size: number, overlap: number): Span[] {
  const chunks: Span[] = [];
  let current: Span[] = [];
  const length = (spans: Span[]): number =>
    spans.length === 0 ? 0 : spans[spans.length - 1]!.end - spans[0]!.start;

  for (const piece of pieces) {
    if (current.length > 0 && length([...current, piece]) > size) {
      chunks.push({ start: current[0]!.start, end: current[current.length - 1]!.end });
      // Keep trailing pieces that fit the overlap budget and leave room for the new piece.
      while (
        current.length > 0 &&
        (length(current) > overlap || length([...current, piece]) > size)
      ) {
        current = current.slice(1);
      }
    }
    current.push(piece);
  }
  if (current.length > 0)
    chunks.push({ start: current[0]!.start, end: current[current.length - 1]!.end });
  return chunks;
}

/** Drops leading and trailing whitespace from each span, and spans that are only whitespace. */
function trimSpans(text: string, spans: Span[]): Span[] {
  const trimmed: Span[] = [];
  for (const span of spans) {
    let { start, end } = span;
    while (start < end && /\s/.test(text[start]!)) start++;
    while (end > start && /\s/.test(text[end - 1]!)) end--;
    const previous = trimmed[trimmed.length - 1];
    if (end > start && !(previous && previous.start === start && previous.end === end)) {
      trimmed.push({ start, end });
    }
  }
  return trimmed;
}

/** Whitespace-delimited word count: an estimate until model-tokenizer counting lands. */
export function estimateTokens(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

export function toChunks(text: string, spans: Span[]): Chunk[] {
  return spans.map((span, index) => {
    const chunkText = text.slice(span.start, span.end);
    return {
      index,
      text: chunkText,
      start: span.start,
      end: span.end,
      sha256: createHash('sha256').update(chunkText).digest('hex'),
      tokenCount: estimateTokens(chunkText),
    };
  });
}
