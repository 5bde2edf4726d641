import { z } from 'zod';

import { filterSchema, knowledgeBaseIdsSchema, searchHitSchema } from './search.model';

export const MAX_SIMILAR = 50;
export const SIMILAR_UNITS = ['chunks', 'documents'] as const;

/** `POST /v1/search/similar` and gRPC `SearchSimilar`: similar to a text or to a document. */
export const similarRequestSchema = z
  .object({
    text: z
      .string()
      .trim()
      .min(1, 'text must not be empty')
      .max(4000)
      .optional()
      .describe('Find chunks similar to this text.'),
    documentId: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe(
        'Or find chunks similar to this document (its chunks’ mean vector); it is excluded.',
      ),
    unit: z
      .enum(SIMILAR_UNITS)
      .default('chunks')
      .describe('chunks, or documents: one hit per document, its most similar chunk.'),
    topK: z
      .number()
      .int()
      .min(0)
      .max(MAX_SIMILAR, `topK must be at most ${MAX_SIMILAR}`)
      .default(10)
      .transform((k) => (k === 0 ? 10 : k))
      .describe('How many chunks (or documents) to return (0 means 10).'),
    knowledgeBaseIds: knowledgeBaseIdsSchema,
    filter: filterSchema,
  })
  .refine((r) => (r.text === undefined) !== (r.documentId === undefined), {
    message: 'give exactly one of text and documentId',
    path: ['text'],
  });
export type SimilarRequest = z.infer<typeof similarRequestSchema>;

export const similarResponseSchema = z.object({
  hits: z.array(searchHitSchema),
  tookMs: z.number(),
  unit: z.enum(SIMILAR_UNITS),
  /** Hits' document fields and locations: applied, or skipped: <reason>. */
  details: z.string(),
});
export type SimilarResponse = z.infer<typeof similarResponseSchema>;
