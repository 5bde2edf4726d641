import { tmpdir } from 'node:os';

import { controllerRoutes, documentedRoutes, HealthController, MetricsController } from '@kb/http';
import type { DynamicModule } from '@nestjs/common';
import OpenAPISchemaValidator from 'openapi-schema-validator';

import { AppModule } from './app.module';
import { documentPageSchema, documentViewSchema } from './documents/document.model';
import { DOCUMENT_CONTROLLERS, DOCUMENT_OPENAPI, OpenApiController } from './openapi.controller';
import {
  documentServiceFixture,
  newAccess,
  spool,
  TENANT,
} from './testing/document-service.fixture';

/** A JSON Schema or OpenAPI node, walked by key in these assertions. */
type Node = { [key: string]: Node } & { required?: string[] };

const files = spool();
afterAll(() => files.cleanup());

describe('document-service OpenAPI document', () => {
  const paths = DOCUMENT_OPENAPI['paths'] as Record<string, Record<string, Node>>;

  it('is a valid OpenAPI 3.0 document', () => {
    const validator = new OpenAPISchemaValidator({ version: 3 });
    expect(validator.validate(DOCUMENT_OPENAPI as never).errors).toEqual([]);
  });

  it('describes the upload as multipart with a required binary file part', () => {
    const schema =
      paths['/v1/documents']!['post'].requestBody.content['multipart/form-data'].schema;
    expect(schema.properties.file).toEqual({ type: 'string', format: 'binary' });
    expect(schema.required).toEqual(['file']);
    expect(Object.keys(schema.properties).sort()).toEqual(
      [
        'acl',
        'expiresAt',
        'externalId',
        'file',
        'knowledgeBaseIds',
        'knowledge_base_ids',
        'metadata',
        'tags',
        'title',
      ].sort(),
    );
    expect(schema.properties.knowledge_base_ids.deprecated).toBe(true);
    // The same operation takes the text itself as JSON.
    const json = paths['/v1/documents']!['post'].requestBody.content['application/json'].schema;
    expect(Object.keys(json.properties)).toEqual(
      expect.arrayContaining(['text', 'markdown', 'externalId', 'knowledgeBaseIds']),
    );
    expect(Object.keys(paths['/v1/documents']!['post'].responses)).toEqual(
      expect.arrayContaining(['200', '202', '413']),
    );
  });

  it('describes what the service answers: a document, its page, a replaced version', async () => {
    const f = documentServiceFixture();
    const alice = newAccess();
    const uploaded = await f.documents.upload(TENANT, alice, files.file('# Notes\nhello'), {
      tags: ['a'],
      metadata: { team: 'search', year: 2026 },
    });
    expect(documentViewSchema.strict().safeParse(uploaded).error).toBeUndefined();
    const page = await f.documents.list(TENANT, alice, 10);
    expect(documentPageSchema.safeParse(page).error).toBeUndefined();
    const same = await f.documents.replaceContent(
      TENANT,
      alice,
      uploaded.id,
      files.file('# Notes\nhello'),
    );
    expect(same.unchanged).toBe(true);
    expect(documentViewSchema.strict().safeParse(same).error).toBeUndefined();
  });

  it('describes the content, text and stats routes', () => {
    const content = paths['/v1/documents/{id}/content']!['get'];
    expect(Object.keys(content.responses).sort()).toEqual(
      ['200', '206', '400', '401', '404', '416', '503'].sort(),
    );
    expect(content.responses['206']!.content['*/*']).toBeDefined();
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

  it('documents every route of its controllers, from their @ApiOperation', () => {
    expect(documentedRoutes(DOCUMENT_OPENAPI)).toEqual(controllerRoutes(...DOCUMENT_CONTROLLERS));
  });

  it('leaves out no REST controller the app serves', () => {
    const app = AppModule.register({ config: { UPLOAD_TMP_DIR: tmpdir() } } as never);
    // The root's own controllers and those of the feature modules it imports.
    const controllersOf = (module: unknown): unknown[] =>
      typeof module === 'function'
        ? ((Reflect.getMetadata('controllers', module) as unknown[] | undefined) ?? [])
        : [
            ...((module as DynamicModule).controllers ?? []),
            ...controllersOf((module as DynamicModule).module),
          ];
    const controllers = [app, ...(app.imports ?? [])].flatMap(controllersOf);
    const unlisted = [OpenApiController, HealthController, MetricsController];
    const served = controllers.filter(
      (c) => controllerRoutes(c as never).length > 0 && !unlisted.includes(c as never),
    );
    expect(new Set(served)).toEqual(new Set(DOCUMENT_CONTROLLERS));
  });
});
