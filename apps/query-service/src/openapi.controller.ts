import { openAiModelListSchema } from '@kb/contracts';
import { buildOpenApiDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';
import { z } from 'zod';

import { retrieveContextResponseSchema, retrieveContextSchema } from './context/context.service';
import { rerankRequestSchema, rerankResponseSchema } from './rerank/rerank.model';
import {
  MAX_TOP_K,
  SEARCH_MODES,
  searchRequestSchema,
  searchResponseSchema,
} from './search/search.model';
import { similarRequestSchema, similarResponseSchema } from './search/similar.model';

const crossEncoderStateSchema = z.object({
  configured: z.boolean(),
  loaded: z.boolean(),
  model: z.string().nullable(),
});

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
      'Search, similarity, context retrieval and reranking over a tenant\u2019s documents. Search, similarity and context are also served over gRPC (kb.v1.KnowledgeBase).',
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
      method: 'get',
      path: '/v1/search',
      operationId: 'searchGet',
      summary: 'The same search for simple clients, from the query string',
      parameters: [
        { name: 'q', in: 'query', schema: z.string().min(1), description: 'The query.' },
        {
          name: 'limit',
          in: 'query',
          schema: z.number().int().min(1).max(MAX_TOP_K).optional(),
          description: 'How many hits (topK); default 10.',
        },
        {
          name: 'offset',
          in: 'query',
          schema: z.number().int().min(0).optional(),
          description: 'Hits to skip: the previous page\u2019s nextOffset.',
        },
        {
          name: 'mode',
          in: 'query',
          schema: z.enum(SEARCH_MODES).optional(),
          description: 'hybrid (default), semantic, lexical or auto.',
        },
        {
          name: 'kb',
          in: 'query',
          schema: z.string().optional(),
          description: 'Knowledge base ids, comma-separated or repeated; none means all.',
        },
      ],
      status: 200,
      response: searchResponseSchema,
    },
    {
      method: 'post',
      path: '/v1/search/similar',
      operationId: 'searchSimilar',
      summary:
        'Chunks or documents similar to a text or to a document (excluded), by their vectors',
      body: similarRequestSchema,
      status: 200,
      response: similarResponseSchema,
      errors: [404, 409],
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
      method: 'post',
      path: '/v1/rerank',
      operationId: 'rerank',
      summary:
        'Order passages by the cross-encoder\u2019s relevance to a query (503 cross_encoder_not_loaded without one)',
      body: rerankRequestSchema,
      status: 200,
      response: rerankResponseSchema,
      // Needs read on documents; over the model budget or its queue full: 429 (docs/adr/0023).
      errors: [403, 429],
    },
    {
      method: 'get',
      path: '/v1/models',
      operationId: 'listModels',
      summary:
        'The embedding models and the cross-encoder this service runs, in OpenAI\u2019s list shape, with the cross-encoder\u2019s state',
      status: 200,
      response: openAiModelListSchema.extend({ cross_encoder: crossEncoderStateSchema }),
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
