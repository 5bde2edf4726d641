import type { MarkdownChunkerConfig } from '@kb/contracts';

import type { Heading } from './headings.parser';
import { recursiveChunkSpans } from './recursive.chunker';
import type { Span } from './spans.util';

export type MarkdownOptions = Pick<MarkdownChunkerConfig, 'size' | 'overlap' | 'headingLevel'>;

/**
 * Markdown by sections: a heading of level `headingLevel` or higher starts a new section, and no
 * chunk or overlap spans two sections. Each section is chunked recursively (paragraph, line,
 * sentence, word) to `size` characters with `overlap`.
 */
export function markdownChunkSpans(
  text: string,
  options: MarkdownOptions,
  headings: Heading[],
): Span[] {
  const bounds = headings
    .filter((heading) => heading.level <= options.headingLevel)
    .map((heading) => heading.start);
  const starts = [0, ...bounds.filter((start) => start > 0)];
  return starts.flatMap((start, i) =>
    recursiveChunkSpans(text, options, { start, end: starts[i + 1] ?? text.length }),
  );
}
