import { z } from 'zod';

/** One chunk of extracted text. Offsets index into the extracted text: text === extracted.slice(start, end). */
export const chunkSchema = z.object({
  index: z.number().int().nonnegative(),
  text: z.string(),
  start: z.number().int().nonnegative(),
  end: z.number().int().nonnegative(),
  sha256: z.string(),
  tokenCount: z.number().int().nonnegative(),
  /** The page the chunk starts on (paged formats such as PDF). */
  page: z.number().int().positive().optional(),
  /** The Markdown headings in force where the chunk starts, outermost first; absent before it existed. */
  headingPath: z.array(z.string()).default([]),
});
export type Chunk = z.infer<typeof chunkSchema>;

/** The parse output stored by reference (claim check) for the embedding-service. */
export const parsedDocumentSchema = z.object({
  documentId: z.uuid(),
  version: z.number().int().positive(),
  title: z.string(),
  chunks: z.array(chunkSchema),
});
export type ParsedDocument = z.infer<typeof parsedDocumentSchema>;

/** The embedding output stored by reference for the indexing-service. */
export const embeddedChunksSchema = z.object({
  documentId: z.uuid(),
  version: z.number().int().positive(),
  title: z.string(),
  model: z.string(),
  dimension: z.number().int().positive(),
  chunks: z.array(chunkSchema.extend({ vector: z.array(z.number()) })),
});
export type EmbeddedChunks = z.infer<typeof embeddedChunksSchema>;
