import { buildRouteDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';
import { z } from 'zod';

import { OpenAiController } from './openai.controller';

/** OpenAI's error body, which these routes answer with (openai-exception.filter.ts). */
const openAiErrorSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string().describe('invalid_request_error, authentication_error, server_error, …'),
    param: z.string().nullable().describe('The request field at fault, when one is.'),
    code: z.string().describe('Stable code, e.g. model_not_found, input_too_large.'),
  }),
});

/** The controllers of the public REST API, each route with its `@ApiOperation`. */
export const EMBEDDING_CONTROLLERS = [OpenAiController];

/** embedding-service's public API: OpenAI-compatible embeddings and models (ADR 23). */
export const EMBEDDING_OPENAPI = buildRouteDocument(
  {
    title: 'Knowledge base OpenAI-compatible embeddings API',
    version: '1',
    description:
      'OpenAI\u2019s embeddings and models endpoints over the models the knowledge base embeds with. Point an OpenAI SDK\u2019s base URL at /v1 with a knowledge-base token as its API key.',
  },
  EMBEDDING_CONTROLLERS,
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
