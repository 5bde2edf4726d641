import { z } from 'zod';

// How a knowledge base's documents are cut into chunks, fixed when the knowledge base is created
// and carried to the parser on each `uploaded` event. Sizes and overlaps are in characters (UTF-16
// code units, as JavaScript counts them) except for `token`, which counts the embedding model's
// own tokens. Every overlap is an upper bound of at most half the size: each chunk then moves at
// least half a chunk forward, so a document yields at most about twice the chunks it would
// without overlap (an overlap just under the size multiplied chunks and embeddings ~100 times).

const bounded = (min: number, max: number, fallback: number) =>
  z.number().int().min(min).max(max).default(fallback);
const overlapBelowSize = (c: { size: number; overlap: number }): boolean => c.overlap * 2 <= c.size;
const OVERLAP_MESSAGE = { message: 'overlap must be at most half of size', path: ['overlap'] };

/** Split at the first separator that occurs, recursing into pieces still too long. */
export const recursiveChunkerSchema = z
  .object({
    strategy: z.literal('recursive'),
    size: bounded(100, 8000, 1000),
    overlap: bounded(0, 2000, 150),
    /** Tried in order; `""` is a hard cut (always tried last). Default paragraph, line, sentence, word. */
    separators: z.array(z.string().max(16)).min(1).max(16).optional(),
  })
  .strict()
  .refine(overlapBelowSize, OVERLAP_MESSAGE);

/**
 * Whole sentences (Intl.Segmenter) packed up to `size` characters; `overlap` is a character budget
 * filled only with whole trailing sentences of the previous chunk, so a sentence longer than it is
 * never repeated. A sentence longer than `size` is cut at words.
 */
export const sentenceChunkerSchema = z
  .object({
    strategy: z.literal('sentence'),
    size: bounded(100, 8000, 1000),
    overlap: bounded(0, 2000, 150),
  })
  .strict()
  .refine(overlapBelowSize, OVERLAP_MESSAGE);

/** Whole paragraphs (blank-line separated) packed up to `size` characters, no overlap. */
export const paragraphChunkerSchema = z
  .object({
    strategy: z.literal('paragraph'),
    size: bounded(100, 8000, 1000),
  })
  .strict();

/**
 * Sections that start at a Markdown ATX heading of level `headingLevel` or higher (fewer `#`) are
 * chunked apart: a chunk, and its overlap, never spans two of them.
 */
export const markdownChunkerSchema = z
  .object({
    strategy: z.literal('markdown'),
    size: bounded(100, 8000, 1000),
    overlap: bounded(0, 2000, 150),
    headingLevel: z.number().int().min(1).max(6).default(3),
  })
  .strict()
  .refine(overlapBelowSize, OVERLAP_MESSAGE);

/** Words packed up to `size` tokens of the embedding model (its special tokens included). */
export const tokenChunkerSchema = z
  .object({
    strategy: z.literal('token'),
    size: bounded(16, 8192, 256),
    overlap: bounded(0, 2048, 32),
  })
  .strict()
  .refine(overlapBelowSize, OVERLAP_MESSAGE);

export const CHUNKER_STRATEGIES = [
  'recursive',
  'sentence',
  'paragraph',
  'markdown',
  'token',
] as const;
export type ChunkerStrategy = (typeof CHUNKER_STRATEGIES)[number];

/**
 * A chunker config, discriminated by `strategy`. A config without a strategy is `recursive`, as
 * every config was before the other strategies existed; `{}` is the default, recursive 1000/150.
 */
export const chunkerConfigSchema = z.preprocess(
  (value) =>
    typeof value === 'object' && value !== null && !Array.isArray(value) && !('strategy' in value)
      ? { ...value, strategy: 'recursive' }
      : value,
  z.discriminatedUnion('strategy', [
    recursiveChunkerSchema,
    sentenceChunkerSchema,
    paragraphChunkerSchema,
    markdownChunkerSchema,
    tokenChunkerSchema,
  ]),
);
export type ChunkerConfig = z.infer<typeof chunkerConfigSchema>;
export type RecursiveChunkerConfig = z.infer<typeof recursiveChunkerSchema>;
export type SentenceChunkerConfig = z.infer<typeof sentenceChunkerSchema>;
export type ParagraphChunkerConfig = z.infer<typeof paragraphChunkerSchema>;
export type MarkdownChunkerConfig = z.infer<typeof markdownChunkerSchema>;
export type TokenChunkerConfig = z.infer<typeof tokenChunkerSchema>;

export const DEFAULT_CHUNKER: ChunkerConfig = chunkerConfigSchema.parse({});
