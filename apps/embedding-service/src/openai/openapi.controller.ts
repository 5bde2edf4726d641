import { openAiModelListSchema, openAiModelSchema } from '@kb/contracts';
import { buildOpenApiDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';
import { z } from 'zod';

import { embeddingsRequestSchema, embeddingsResponseSchema } from './openai.model';

/** OpenAI's error body, which these routes answer with (openai-exception.filter.ts). */
const openAiErrorSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string().describe('invalid_request_error, authentication_error, server_error, …'),
    param: z.string().nullable().describe('The request field at fault, when one is.'),
    code: z.string().describe('Stable code, e.g. model_not_found, input_too_large.'),
  }),
});

/** embedding-service's public API: OpenAI-compatible embeddings and models (ADR 23). */
export const EMBEDDING_OPENAPI = buildOpenApiDocument(
  {
    title: 'Knowledge base OpenAI-compatible embeddings API',
    version: '1',
    description:
      'OpenAI\u2019s embeddings and models endpoints over the models the knowledge base embeds with. Point an OpenAI SDK\u2019s base URL at /v1 with a knowledge-base token as its API key.',
  },
  [
    {
      method: 'post',
      path: '/v1/embeddings',
      operationId: 'createEmbedding',
      summary: 'Embed a text or an array of texts (token ids are refused: token_input_unsupported)',
      body: embeddingsRequestSchema,
      status: 200,
      response: embeddingsResponseSchema,
      errors: [403, 404, 429],
    },
    {
      method: 'get',
      path: '/v1/models',
      operationId: 'listModels',
      summary: 'The embedding models served here',
      status: 200,
      response: openAiModelListSchema,
    },
    {
      method: 'get',
      path: '/v1/models/{model}',
      operationId: 'retrieveModel',
      summary: 'One served model (404 model_not_found otherwise)',
      parameters: [{ name: 'model', in: 'path', schema: z.string() }],
      status: 200,
      response: openAiModelSchema,
      errors: [404],
    },
  ],
  { errorBody: openAiErrorSchema },
);

@Public()
@Controller()
export class OpenApiController {
  @Get('openapi.json')
  document(): Record<string, unknown> {
    return EMBEDDING_OPENAPI;
  }
}
