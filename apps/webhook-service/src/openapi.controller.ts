import { buildRouteDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';

import { WebhooksController } from './webhooks/webhooks.controller';

/** The controllers of the public REST API, each route with its `@ApiOperation`. */
export const WEBHOOK_CONTROLLERS = [WebhooksController];

/** The REST API's OpenAPI 3 document, built from the routes' `@ApiOperation`s. */
export const WEBHOOK_OPENAPI = buildRouteDocument(
  {
    title: 'Knowledge base webhooks API',
    version: '1',
    description:
      'A tenant\u2019s webhook subscriptions (tenant admins only) and their delivery log. Deliveries are POSTs of `{type, timestamp, data}` signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`), retried with exponential backoff; a subscription failing too often in a row is disabled (docs/adr/0027).',
  },
  WEBHOOK_CONTROLLERS,
);

@Public()
@Controller()
export class OpenApiController {
  @Get('openapi.json')
  document(): Record<string, unknown> {
    return WEBHOOK_OPENAPI;
  }
}
