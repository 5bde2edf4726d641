/** A range of the extracted text: a chunk is exactly `text.slice(start, end)`. */
export interface Span {
  start: number;
  end: number;
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
/** How far around a cut point grapheme boundaries are looked for. */
const GRAPHEME_WINDOW = 64;

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/**
 * The last position in `(min, at]` where `text` may be cut without splitting a user-perceived
 * character (an emoji with its modifiers, a letter with its accents); failing that, one that does
 * not split a surrogate pair; `at` itself when `at` is `min + 1` and nothing else is possible.
 */
export function safeCut(text: string, at: number, min: number): number {
  if (at >= text.length) return text.length;
  const from = Math.max(min, at - GRAPHEME_WINDOW);
  let best = -1;
  for (const { index } of graphemes.segment(text.slice(from, at + GRAPHEME_WINDOW))) {
    const boundary = from + index;
    if (boundary > at) break;
    if (boundary > min) best = boundary;
  }
  if (best !== -1) return best;
  const splitsPair =
    isLowSurrogate(text.charCodeAt(at)) && isHighSurrogate(text.charCodeAt(at - 1));
  return splitsPair && at - 1 > min ? at - 1 : at;
}

/** Cuts a span into contiguous pieces of at most `size` characters, at grapheme boundaries. */
export function hardCut(text: string, span: Span, size: number): Span[] {
  const pieces: Span[] = [];
  let start = span.start;
  while (start < span.end) {
    const end = start + size >= span.end ? span.end : safeCut(text, start + size, start);
    pieces.push({ start, end });
    start = end;
  }
  return pieces;
}

/** The span without its leading and trailing whitespace; empty (`start === end`) when blank. */
export function trimSpan(text: string, span: Span): Span {
  let { start, end } = span;
  while (start < end && /\s/.test(text[start]!)) start++;
  while (end > start && /\s/.test(text[end - 1]!)) end--;
  return { start, end };
}

/** Each span trimmed; blank ones dropped. */
export function trimSpans(text: string, spans: Span[]): Span[] {
  return spans.map((span) => trimSpan(text, span)).filter((span) => span.end > span.start);
}

/**
 * Splits a span after every match of `separator` (kept at the end of its piece). The pieces are
 * contiguous and cover the span.
 */
export function splitAfter(text: string, span: Span, separator: RegExp): Span[] {
  const pieces: Span[] = [];
  const pattern = new RegExp(separator.source, separator.flags.replace('g', '') + 'g');
  pattern.lastIndex = span.start;
  let start = span.start;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const end = match.index + match[0].length;
    if (end > span.end) break;
    if (match[0].length === 0) {
      pattern.lastIndex++;
      continue;
    }
    if (end > start) pieces.push({ start, end });
    start = end;
  }
  if (start < span.end) pieces.push({ start, end: span.end });
  return pieces;
}

export interface PackOptions {
  /** Longest chunk, in characters. */
  size: number;
  /** At most this many characters of a chunk's last pieces start the next chunk. */
  overlap: number;
  /** Pieces a chunk's overlap may begin at (whole sentences, say); any piece when absent. */
  overlapMayStartAt?: (piece: Span) => boolean;
}

/**
 * Greedily packs trimmed, ordered, non-overlapping pieces (each at most `size` long) into chunks
 * of at most `size` characters, from the first piece's start to the last one's end. Each chunk
 * after the first starts with the longest run of the previous chunk's last pieces that fits the
 * overlap and leaves room for a new piece, so chunks start and end strictly later than the one
 * before, and everything the pieces cover is in some chunk.
 */
export function packPieces(pieces: Span[], options: PackOptions): Span[] {
  const { size, overlap, overlapMayStartAt = () => true } = options;
  const chunks: Span[] = [];
  let current: Span[] = [];
  const extent = (from: Span, to: Span): number => to.end - from.start;

  for (const piece of pieces) {
    if (current.length > 0 && extent(current[0]!, piece) > size) {
      chunks.push({ start: current[0]!.start, end: current[current.length - 1]!.end });
      const last = current[current.length - 1]!;
      const fits = (from: Span): boolean =>
        extent(from, last) <= overlap && extent(from, piece) <= size;
      // The longest run of last pieces that fits, never the whole chunk, starting where allowed.
      let keep = current.length;
      while (keep > 1 && fits(current[keep - 1]!)) keep--;
      while (keep < current.length && !overlapMayStartAt(current[keep]!)) keep++;
      current = current.slice(keep);
    }
    current.push(piece);
  }
  if (current.length > 0) {
    chunks.push({ start: current[0]!.start, end: current[current.length - 1]!.end });
  }
  return chunks;
}
