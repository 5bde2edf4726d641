import { controllerRoutes, documentedRoutes } from '@kb/http';
import OpenAPISchemaValidator from 'openapi-schema-validator';

import { AdminController } from './admin/admin.controller';
import { AuditController } from './audit/audit.controller';
import { ACL_OPENAPI } from './openapi.controller';

describe('acl-service OpenAPI document', () => {
  it('is a valid OpenAPI 3.0 document', () => {
    const validator = new OpenAPISchemaValidator({ version: 3 });
    expect(validator.validate(ACL_OPENAPI as never).errors).toEqual([]);
  });

  it('documents every route the controllers serve, and no other', () => {
    expect(documentedRoutes(ACL_OPENAPI)).toEqual(
      controllerRoutes(AdminController, AuditController),
    );
  });
});
