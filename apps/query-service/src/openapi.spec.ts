import { controllerRoutes, documentedRoutes, HealthController, MetricsController } from '@kb/http';
import OpenAPISchemaValidator from 'openapi-schema-validator';

import { AppModule } from './app.module';
import { ContextController, searchToolDefinition } from './context/context.controller';
import { McpController } from './mcp/mcp.controller';
import { ModelsController } from './models/models.controller';
import { OpenApiController, QUERY_CONTROLLERS, QUERY_OPENAPI } from './openapi.controller';
import { RerankController } from './rerank/rerank.controller';
import { SearchController } from './search/search.controller';

/** A JSON Schema or OpenAPI node, walked by key in these assertions. */
type Node = { [key: string]: Node } & { required?: string[] };

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.0 document', () => {
    const validator = new OpenAPISchemaValidator({ version: 3 });
    expect(validator.validate(QUERY_OPENAPI as never).errors).toEqual([]);
  });

  it('describes every search request field, generated from the validating schema', () => {
    const paths = QUERY_OPENAPI['paths'] as Record<string, Record<string, Node>>;
    const body = paths['/v1/search']!['post'].requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties).sort()).toEqual(
      [
        'filter',
        'fusion',
        'knowledgeBaseIds',
        'minScore',
        'mmr',
        'mmrLambda',
        'mode',
        'neighbors',
        'offset',
        'query',
        'rerank',
        'rerankBudgetMs',
        'timeoutMs',
        'topK',
      ].sort(),
    );
    expect(body.required).toEqual(['query']);
    expect(body.properties.topK).toMatchObject({ maximum: 100, default: 10 });
    const response =
      paths['/v1/search']!['post'].responses['200'].content['application/json'].schema;
    expect(response.properties.hits.items.required).toContain('strategies');
    expect(Object.keys(response.properties.hits.items.properties)).toEqual(
      expect.arrayContaining([
        'page',
        'headingPath',
        'tags',
        'metadata',
        'contentType',
        'createdAt',
      ]),
    );
    expect(response.required).toEqual(
      expect.arrayContaining(['queryType', 'total', 'totalRelation', 'details']),
    );
    expect(Object.keys(paths['/v1/search']!['post'].responses)).toEqual([
      '200',
      '400',
      '401',
      '413',
      '429',
      '503',
    ]);
  });

  it('describes the GET search, similarity search and the conversation of context requests', () => {
    const paths = QUERY_OPENAPI['paths'] as Record<string, Record<string, Node>>;
    const get = paths['/v1/search']!['get'] as unknown as { parameters: Array<{ name: string }> };
    expect(get.parameters.map((p) => p.name)).toEqual(['q', 'limit', 'offset', 'mode', 'kb']);
    const similar =
      paths['/v1/search/similar']!['post'].requestBody.content['application/json'].schema;
    expect(Object.keys(similar.properties)).toEqual(
      expect.arrayContaining(['text', 'documentId', 'unit', 'topK']),
    );
    const context = paths['/v1/context']!['post'];
    expect(
      Object.keys(context.requestBody.content['application/json'].schema.properties),
    ).toContain('messages');
    expect(
      context.responses['200'].content['application/json'].schema.properties.queryStrategy,
    ).toMatchObject({ enum: ['standalone', 'history_rule', 'model_rewrite'] });
  });

  it('describes the rerank and model-list operations', () => {
    const paths = QUERY_OPENAPI['paths'] as Record<string, Record<string, Node>>;
    const body = paths['/v1/rerank']!['post'].requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties).sort()).toEqual(
      ['documents', 'model', 'query', 'return_documents', 'top_k', 'top_n'].sort(),
    );
    expect(body.required).toEqual(['query', 'documents']);
    const result =
      paths['/v1/rerank']!['post'].responses['200'].content['application/json'].schema.properties
        .results.items;
    expect(result.required).toEqual(['index', 'relevance_score', 'original_rank']);
    const models = paths['/v1/models']!['get'].responses['200'].content['application/json'].schema;
    expect(Object.keys(models.properties).sort()).toEqual(['cross_encoder', 'data', 'object']);
  });

  it('serves the search tool with the same parameters as the search body', () => {
    const tool = searchToolDefinition() as { function: { name: string; parameters: Node } };
    expect(tool.function.name).toBe('search_knowledge_base');
    expect(Object.keys(tool.function.parameters.properties)).toContain('filter');
    expect(tool.function.parameters.required).toEqual(['query']);
  });

  it('documents every route the controllers serve, and no other', () => {
    expect(documentedRoutes(QUERY_OPENAPI)).toEqual(
      controllerRoutes(SearchController, ContextController, RerankController, ModelsController),
    );
  });

  it('leaves out no REST controller the app serves but /mcp', () => {
    const { controllers = [] } = AppModule.register({ config: {} } as never);
    const unlisted = [McpController, OpenApiController, HealthController, MetricsController];
    const served = controllers.filter(
      (c) => controllerRoutes(c).length > 0 && !unlisted.includes(c as never),
    );
    expect(new Set(served)).toEqual(new Set(QUERY_CONTROLLERS));
  });
});
