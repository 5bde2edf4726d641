import OpenAPISchemaValidator from 'openapi-schema-validator';

import { DOCUMENT_OPENAPI } from './openapi.controller';

type Node = { [key: string]: Node } & { required?: string[] };

describe('document-service OpenAPI document', () => {
  it('is a valid OpenAPI 3.0 document describing the content, text and stats routes', () => {
    const validator = new OpenAPISchemaValidator({ version: 3 });
    expect(validator.validate(DOCUMENT_OPENAPI as never).errors).toEqual([]);
    const paths = DOCUMENT_OPENAPI['paths'] as Record<string, Record<string, Node>>;
    const content = paths['/v1/documents/{id}/content']!['get'];
    expect(Object.keys(content.responses).sort()).toEqual(
      ['200', '206', '400', '401', '404', '416', '503'].sort(),
    );
    expect(content.responses['206']!.content['application/octet-stream']).toBeDefined();
    const text = paths['/v1/documents/{id}/text']!['get'];
    expect((text.parameters as unknown as Array<{ name: string }>).map((p) => p.name)).toEqual([
      'id',
      'offset',
      'limit',
      'version',
    ]);
    expect(text.responses['200']!.content['application/json'].schema.required).toContain(
      'nextOffset',
    );
    expect(paths['/v1/stats']!['get']).toBeDefined();
  });
});
