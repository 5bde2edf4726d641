import { buildOpenApiDocument, Public } from '@kb/http';
import { Controller, Get } from '@nestjs/common';
import { z } from 'zod';

import {
  createdWebhookSchema,
  createWebhookSchema,
  deliveriesQuerySchema,
  deliveryViewSchema,
  rotatedSecretSchema,
  rotateSecretSchema,
  updateWebhookSchema,
  webhookIdSchema,
  webhookViewSchema,
} from './webhooks/webhook.model';

const idParameter = {
  name: 'id',
  in: 'path' as const,
  schema: webhookIdSchema,
  description: 'The webhook id.',
};

const deliveriesParameters = Object.entries(deliveriesQuerySchema.shape).map(([name, schema]) => ({
  name,
  in: 'query' as const,
  schema,
}));

/** The REST API's OpenAPI 3 document, generated from the schemas that validate requests. */
export const WEBHOOK_OPENAPI = buildOpenApiDocument(
  {
    title: 'Knowledge base webhooks API',
    version: '1',
    description:
      'A tenant\u2019s webhook subscriptions (tenant admins only) and their delivery log. Deliveries are POSTs of `{type, timestamp, data}` signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`), retried with exponential backoff; a subscription failing too often in a row is disabled (docs/adr/0027).',
  },
  [
    {
      method: 'post',
      path: '/v1/webhooks',
      operationId: 'createWebhook',
      summary:
        'Subscribe a receiver URL to events; the answer carries the signing secret, once (409 webhook_limit_reached past WEBHOOK_MAX_PER_TENANT subscriptions)',
      body: createWebhookSchema,
      status: 201,
      response: createdWebhookSchema,
      errors: [403, 409, 413],
    },
    {
      method: 'get',
      path: '/v1/webhooks',
      operationId: 'listWebhooks',
      summary: 'The tenant\u2019s subscriptions',
      status: 200,
      response: z.object({ items: z.array(webhookViewSchema) }),
      errors: [403],
    },
    {
      method: 'get',
      path: '/v1/webhooks/{id}',
      operationId: 'getWebhook',
      summary: 'One subscription, with whether (and why) it is disabled',
      parameters: [idParameter],
      status: 200,
      response: webhookViewSchema,
      errors: [403, 404],
    },
    {
      method: 'patch',
      path: '/v1/webhooks/{id}',
      operationId: 'updateWebhook',
      summary: 'Enable or disable a subscription, change its events or description',
      parameters: [idParameter],
      body: updateWebhookSchema,
      status: 200,
      response: webhookViewSchema,
      errors: [403, 404, 413],
    },
    {
      method: 'delete',
      path: '/v1/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Remove a subscription with its deliveries and their log',
      parameters: [idParameter],
      status: 200,
      response: z.object({ id: z.uuid() }),
      errors: [403, 404],
    },
    {
      method: 'get',
      path: '/v1/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'Deliveries, newest first, each with every try: status code, error, duration',
      parameters: [idParameter, ...deliveriesParameters],
      status: 200,
      response: z.object({ items: z.array(deliveryViewSchema) }),
      errors: [403, 404],
    },
    {
      method: 'post',
      path: '/v1/webhooks/{id}/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary:
        'Replace the signing secret (shown once); the old one keeps signing beside it for graceSeconds (default 86400), so deliveries carry both signatures meanwhile',
      parameters: [idParameter],
      body: rotateSecretSchema,
      status: 200,
      response: rotatedSecretSchema,
      errors: [403, 404, 413],
    },
    {
      method: 'post',
      path: '/v1/webhooks/{id}/test',
      operationId: 'testWebhook',
      summary: 'Send a `webhook.test` message through the queue, signing and retries',
      parameters: [idParameter],
      status: 202,
      response: z.object({ deliveryId: z.uuid(), messageId: z.string() }),
      errors: [403, 404],
    },
  ],
);

@Public()
@Controller()
export class OpenApiController {
  @Get('openapi.json')
  document(): Record<string, unknown> {
    return WEBHOOK_OPENAPI;
  }
}
