import { z } from 'zod';

/**
 * OpenAI's model object (`GET /v1/models`), as embedding-service and query-service list what they
 * serve (ADR 23). `kind` and `dimension` are extensions OpenAI's clients pass through.
 */
export const openAiModelSchema = z.object({
  id: z.string(),
  object: z.literal('model'),
  created: z.number().int().describe('Unix seconds: when this service started serving it.'),
  owned_by: z.string(),
  kind: z.enum(['embedding', 'cross-encoder']).describe('Extension: what the model does.'),
  dimension: z
    .number()
    .int()
    .optional()
    .describe('Extension: an embedding model\u2019s vector size.'),
});
export type OpenAiModel = z.infer<typeof openAiModelSchema>;

export const openAiModelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(openAiModelSchema),
});
export type OpenAiModelList = z.infer<typeof openAiModelListSchema>;

/** Who owns the models a knowledge-base service lists. */
export const OPENAI_MODEL_OWNER = 'knowledge-base';
