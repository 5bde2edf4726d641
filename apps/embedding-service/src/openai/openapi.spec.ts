import OpenAPISchemaValidator from 'openapi-schema-validator';

import { EMBEDDING_OPENAPI } from './openapi.controller';

type Node = { [key: string]: Node } & { required?: string[] };

describe('embedding-service OpenAPI document', () => {
  it('is a valid OpenAPI 3.0 document', () => {
    const validator = new OpenAPISchemaValidator({ version: 3 });
    expect(validator.validate(EMBEDDING_OPENAPI as never).errors).toEqual([]);
  });

  it('describes the embeddings request and OpenAI\u2019s error body', () => {
    const paths = EMBEDDING_OPENAPI['paths'] as Record<string, Record<string, Node>>;
    const body = paths['/v1/embeddings']!['post'].requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties).sort()).toEqual(
      ['dimensions', 'encoding_format', 'input', 'model', 'user'].sort(),
    );
    expect(body.required).toEqual(['input', 'model']);
    const components = EMBEDDING_OPENAPI['components'] as Node;
    expect(components.schemas.Error.properties.error.required).toEqual([
      'message',
      'type',
      'param',
      'code',
    ]);
  });
});
