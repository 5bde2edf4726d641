import type { ParagraphChunkerConfig } from '@kb/contracts';

import type { Heading } from './headings.parser';
import { assertSizes } from './recursive.chunker';
import { sentenceChunkSpans } from './sentence.chunker';
import { packPieces, type Span, splitAfter, trimSpans } from './spans.util';

export type ParagraphOptions = Pick<ParagraphChunkerConfig, 'size'>;

/** A blank line (only spaces or tabs on it) ends a paragraph. */
const BLANK_LINE = /\n[ \t]*\r?\n\s*/;

/**
 * Whole paragraphs packed into chunks of at most `size` characters, without overlap. A heading
 * starts a new chunk (it belongs with what follows it); a paragraph longer than `size` is chunked
 * on its own by sentences.
 */
export function paragraphChunkSpans(
  text: string,
  options: ParagraphOptions,
  headings: Heading[] = [],
): Span[] {
  const { size } = options;
  assertSizes(size, 0);
  const headingStarts = new Set(headings.map((heading) => heading.start));
  // Headings are known by the start of their line (they may be indented up to three spaces).
  const isHeading = (paragraph: Span): boolean =>
    headingStarts.has(text.lastIndexOf('\n', paragraph.start) + 1);
  const chunks: Span[] = [];
  let run: Span[] = [];
  const flush = (): void => {
    chunks.push(...packPieces(run, { size, overlap: 0 }));
    run = [];
  };
  for (const paragraph of trimSpans(
    text,
    splitAfter(text, { start: 0, end: text.length }, BLANK_LINE),
  )) {
    if (paragraph.end - paragraph.start > size) {
      flush();
      chunks.push(...sentenceChunkSpans(text, { size, overlap: 0 }, paragraph));
      continue;
    }
    if (isHeading(paragraph)) flush();
    run.push(paragraph);
  }
  flush();
  return chunks;
}
