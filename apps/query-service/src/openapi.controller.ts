import { buildRouteDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';

import { ContextController } from './context/context.controller';
import { ModelsController } from './models/models.controller';
import { RerankController } from './rerank/rerank.controller';
import { SearchController } from './search/search.controller';

/** The controllers of the public REST API, each route with its `@ApiOperation`. */
export const QUERY_CONTROLLERS = [
  SearchController,
  ContextController,
  RerankController,
  ModelsController,
];

/** The REST API's OpenAPI 3 document, built from the routes' `@ApiOperation`s (not /mcp's). */
export const QUERY_OPENAPI = buildRouteDocument(
  {
    title: 'Knowledge base query API',
    version: '1',
    description:
      'Search, similarity, context retrieval and reranking over a tenant\u2019s documents. Search, similarity and context are also served over gRPC (kb.v1.KnowledgeBase).',
  },
  QUERY_CONTROLLERS,
);

@Public()
@Controller()
export class OpenApiController {
  @Get('openapi.json')
  document(): Record<string, unknown> {
    return QUERY_OPENAPI;
  }
}
