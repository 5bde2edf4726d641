import { controllerRoutes, documentedRoutes } from '@kb/http';
import OpenAPISchemaValidator from 'openapi-schema-validator';

import { WEBHOOK_OPENAPI } from './openapi.controller';
import { WebhooksController } from './webhooks/webhooks.controller';

describe('webhook-service OpenAPI document', () => {
  it('is a valid OpenAPI 3.0 document', () => {
    const validator = new OpenAPISchemaValidator({ version: 3 });
    expect(validator.validate(WEBHOOK_OPENAPI as never).errors).toEqual([]);
  });

  it('documents every route the controller serves, and no other', () => {
    expect(documentedRoutes(WEBHOOK_OPENAPI)).toEqual(controllerRoutes(WebhooksController));
  });
});
