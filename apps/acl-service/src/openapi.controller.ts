import { buildRouteDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';

import { AdminController } from './admin/admin.controller';
import { AuditController } from './audit/audit.controller';

/** The controllers of the public REST API, each route with its `@ApiOperation`. */
export const ACL_CONTROLLERS = [AdminController, AuditController];

/** The REST API's OpenAPI 3 document, built from the routes' `@ApiOperation`s. */
export const ACL_OPENAPI = buildRouteDocument(
  {
    title: 'Knowledge base access-control API',
    version: '1',
    description:
      'A tenant\u2019s roles, role assignments and groups (tenant admins only), and its audit log. Callers\u2019 principals are served over gRPC (kb.v1.Access).',
  },
  ACL_CONTROLLERS,
);

@Public()
@Controller()
export class OpenApiController {
  @Get('openapi.json')
  document(): Record<string, unknown> {
    return ACL_OPENAPI;
  }
}
