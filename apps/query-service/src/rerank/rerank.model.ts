import { z } from 'zod';

/** Documents one request may carry: one cross-encoder pass each, on a CPU. */
export const MAX_RERANK_DOCUMENTS = 200;
/** Characters of one document; the model reads its first 512 tokens or so anyway. */
export const MAX_RERANK_DOCUMENT_CHARACTERS = 20_000;

const documentSchema = z
  .union([
    z.string().max(MAX_RERANK_DOCUMENT_CHARACTERS),
    z.object({ text: z.string().max(MAX_RERANK_DOCUMENT_CHARACTERS) }),
  ])
  .describe('A passage: a string, or an object with `text`.');

/** `POST /v1/rerank`: the shape Cohere, Jina and TEI rerank APIs share. */
export const rerankRequestSchema = z
  .object({
    query: z.string().trim().min(1, 'query must not be empty').max(4000),
    documents: z
      .array(documentSchema)
      .max(MAX_RERANK_DOCUMENTS, `at most ${MAX_RERANK_DOCUMENTS} documents`)
      .describe('The passages to order by relevance to the query; empty answers no results.'),
    top_k: z
      .number()
      .int()
      .min(1)
      .max(MAX_RERANK_DOCUMENTS)
      .optional()
      .describe('How many of the best to return; all when absent.'),
    top_n: z
      .number()
      .int()
      .min(1)
      .max(MAX_RERANK_DOCUMENTS)
      .optional()
      .describe('Cohere\u2019s name for `top_k`; give one or the other.'),
    return_documents: z
      .boolean()
      .default(false)
      .describe('Echo each result\u2019s document as `{text}`.'),
    model: z
      .string()
      .min(1)
      .optional()
      .describe('When given, it must be the cross-encoder loaded here (GET /v1/models).'),
  })
  .refine((r) => r.top_k === undefined || r.top_n === undefined || r.top_k === r.top_n, {
    message: 'top_k and top_n name the same limit: give one',
    path: ['top_n'],
  });
export type RerankRequest = z.infer<typeof rerankRequestSchema>;

export const rerankResultSchema = z.object({
  index: z.number().int().describe('The document\u2019s position in the request (0-based).'),
  relevance_score: z
    .number()
    .nullable()
    .describe('The cross-encoder\u2019s relevance logit; null when the model failed.'),
  original_rank: z
    .number()
    .int()
    .describe('The document\u2019s rank before reranking: its position in the request, 1-based.'),
  document: z.object({ text: z.string() }).optional(),
});
export type RerankResult = z.infer<typeof rerankResultSchema>;

export const rerankResponseSchema = z.object({
  model: z.string(),
  reranked: z
    .boolean()
    .describe('False when the model failed: results are then in the request\u2019s order.'),
  reason: z.literal('reranker_failed').optional(),
  results: z.array(rerankResultSchema).describe('Best first (or the request order, see reranked).'),
});
export type RerankResponse = z.infer<typeof rerankResponseSchema>;
