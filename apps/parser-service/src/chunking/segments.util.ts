import { safeCut, type Span } from './spans.util';

/**
 * No string handed to `Intl.Segmenter` is longer than this: V8's segment iterator slows down with
 * the length of the string it walks (each step costs time in proportion to it), which makes one
 * pass over a large document quadratic.
 */
const WINDOW = 2048;

/**
 * The segments (sentences, words) of `text` within `span` as contiguous spans that cover it,
 * computed a window at a time. The last segment of a window may continue past it, so it is
 * segmented again with what follows; a segment longer than a whole window comes out in
 * window-long parts (longer than any chunk, so it is cut further anyway).
 */
export function* segmentSpans(
  segmenter: Intl.Segmenter,
  text: string,
  span: Span,
): Generator<Span> {
  let start = span.start;
  while (start < span.end) {
    const end = start + WINDOW >= span.end ? span.end : safeCut(text, start + WINDOW, start);
    const parts = [...segmenter.segment(text.slice(start, end))].map(({ index, segment }) => ({
      start: start + index,
      end: start + index + segment.length,
    }));
    const complete = end === span.end || parts.length === 1 ? parts : parts.slice(0, -1);
    yield* complete;
    start = complete[complete.length - 1]!.end;
  }
}
