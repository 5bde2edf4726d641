import { buildOpenApiDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';
import { z } from 'zod';

import { retrieveContextResponseSchema, retrieveContextSchema } from './context/context.service';
import { searchRequestSchema, searchResponseSchema } from './search/search.model';

const toolSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string(),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
  }),
});

/** The REST API's OpenAPI 3 document, generated from the schemas that validate requests. */
export const QUERY_OPENAPI = buildOpenApiDocument(
  {
    title: 'Knowledge base query API',
    version: '1',
    description:
      'Search and context retrieval over a tenant\u2019s documents. The same operations are served over gRPC (kb.v1.KnowledgeBase).',
  },
  [
    {
      method: 'post',
      path: '/v1/search',
      operationId: 'search',
      summary: 'Hybrid, semantic or lexical search over chunks, with filters, pagination and MMR',
      body: searchRequestSchema,
      status: 200,
      response: searchResponseSchema,
      // Over the caller's or the tenant's search budget, with Retry-After (docs/adr/0020).
      errors: [429],
    },
    {
      method: 'post',
      path: '/v1/context',
      operationId: 'retrieveContext',
      summary: 'Passages for an LLM prompt, merged, de-duplicated and packed to a token budget',
      body: retrieveContextSchema,
      status: 200,
      response: retrieveContextResponseSchema,
      // Over the caller's or the tenant's search budget, with Retry-After (docs/adr/0020).
      errors: [429],
    },
    {
      method: 'get',
      path: '/v1/tools/search_knowledge_base',
      operationId: 'searchTool',
      summary: 'The search_knowledge_base tool definition in OpenAI function-calling format',
      status: 200,
      response: toolSchema,
      authenticated: false,
    },
  ],
);

@Public()
@Controller()
export class OpenApiController {
  @Get('openapi.json')
  document(): Record<string, unknown> {
    return QUERY_OPENAPI;
  }
}
