import { z } from 'zod';

/** Inputs one request may carry (OpenAI allows 2048; a CPU model answers a smaller batch in time). */
export const MAX_INPUTS = 256;
/** Characters across all inputs of one request; the JSON body limit (100 kB) comes after it. */
export const MAX_INPUT_CHARACTERS = 60_000;

/** `POST /v1/embeddings`, as OpenAI's API documents it (token-id input aside: see the service). */
export const embeddingsRequestSchema = z.object({
  input: z
    .union([
      z.string().min(1, 'input must not be empty'),
      z
        .array(z.string().min(1, 'input must not contain empty strings'))
        .min(1, 'input must not be an empty array'),
    ])
    .describe(
      `The text to embed, or an array of texts (at most ${MAX_INPUTS}, ${MAX_INPUT_CHARACTERS} characters in all).`,
    ),
  model: z.string().min(1).describe('A model id from GET /v1/models.'),
  encoding_format: z
    .enum(['float', 'base64'])
    .default('float')
    .describe('float: arrays of numbers; base64: little-endian float32 bytes, base64-encoded.'),
  dimensions: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Accepted only when it equals the model's own dimension."),
  user: z.string().max(256).optional().describe('Accepted and ignored.'),
});
export type EmbeddingsRequest = z.infer<typeof embeddingsRequestSchema>;

export const embeddingsResponseSchema = z.object({
  object: z.literal('list'),
  data: z.array(
    z.object({
      object: z.literal('embedding'),
      index: z.number().int(),
      embedding: z.union([z.array(z.number()), z.string()]),
    }),
  ),
  model: z.string(),
  usage: z.object({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }),
});
export type EmbeddingsResponse = z.infer<typeof embeddingsResponseSchema>;

/** A vector as OpenAI's `base64` encoding carries it: float32, little-endian, then base64. */
export function toBase64Float32(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}
