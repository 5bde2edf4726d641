import { createHash } from 'node:crypto';

import type { Chunk, ChunkerConfig } from '@kb/contracts';

import { type Heading, HeadingPaths } from './headings.parser';
import { markdownChunkSpans } from './markdown.chunker';
import { paragraphChunkSpans } from './paragraph.chunker';
import { recursiveChunkSpans } from './recursive.chunker';
import { sentenceChunkSpans } from './sentence.chunker';
import type { Span } from './spans.util';
import { type CountedSpan, tokenChunkSpans } from './token.chunker';
import type { TokenCounter } from './token.counter';
import { yieldEvery } from './yield.util';

/** What chunking needs of an extracted document. */
export interface ChunkSource {
  text: string;
  /** Its Markdown headings (empty for formats without them, such as code or CSV). */
  headings: Heading[];
  /** Where each page starts and ends in `text` (PDF). */
  pages?: Array<{ page: number; start: number; end: number }>;
}

/** The spans of `text` the configured chunker makes; each chunk is `text.slice(start, end)`. */
export async function chunkSpans(
  source: ChunkSource,
  config: ChunkerConfig,
  tokens: TokenCounter,
): Promise<Array<Span | CountedSpan>> {
  const { text, headings } = source;
  switch (config.strategy) {
    case 'recursive':
      return recursiveChunkSpans(text, config);
    case 'sentence':
      return sentenceChunkSpans(text, config);
    case 'paragraph':
      return paragraphChunkSpans(text, config, headings);
    case 'markdown':
      return markdownChunkSpans(text, config, headings);
    case 'token':
      return tokenChunkSpans(text, config, tokens);
    default: {
      const unknown: never = config;
      throw new Error(`unknown chunker ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * Chunks a document with the configured chunker: each chunk carries its exact offsets, its
 * SHA-256, its token count (the model's tokenizer, special tokens included), the heading path where
 * it starts and the page it starts on.
 */
export async function chunkDocument(
  source: ChunkSource,
  config: ChunkerConfig,
  tokens: TokenCounter,
): Promise<Chunk[]> {
  return toChunks(source, await chunkSpans(source, config, tokens), tokens);
}

export async function toChunks(
  source: ChunkSource,
  spans: Array<Span | CountedSpan>,
  tokens: TokenCounter,
): Promise<Chunk[]> {
  const { text, pages } = source;
  const headingPaths = new HeadingPaths(source.headings);
  const pause = yieldEvery(64);
  const chunks: Chunk[] = [];
  for (const [index, span] of spans.entries()) {
    const chunkText = text.slice(span.start, span.end);
    const page = pages && pageAt(pages, span.start);
    chunks.push({
      index,
      text: chunkText,
      start: span.start,
      end: span.end,
      sha256: createHash('sha256').update(chunkText).digest('hex'),
      tokenCount: 'tokenCount' in span ? span.tokenCount : tokens.count(chunkText),
      headingPath: headingPaths.at(span.start),
      ...(page ? { page } : {}),
    });
    await pause();
  }
  return chunks;
}

/** The page whose text holds `offset`, if any (pages are in text order). */
function pageAt(pages: NonNullable<ChunkSource['pages']>, offset: number): number | undefined {
  let low = 0;
  let high = pages.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (pages[middle]!.start <= offset) low = middle + 1;
    else high = middle;
  }
  const page = pages[low - 1];
  return page && offset <= page.end ? page.page : undefined;
}
