import type { Permission } from '@kb/auth';
import type { Caller } from '@kb/auth';
import {
  ApiOperation,
  Authenticated,
  CurrentCaller,
  parseBody,
  pathParameter,
  queryParameters,
} from '@kb/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { z } from 'zod';

import {
  type CreatedWebhook,
  createdWebhookSchema,
  createWebhookSchema,
  deliveriesQuerySchema,
  type DeliveryView,
  deliveryViewSchema,
  type RotatedSecret,
  rotatedSecretSchema,
  rotateSecretSchema,
  updateWebhookSchema,
  webhookIdSchema,
  type WebhookView,
  webhookViewSchema,
} from './webhook.model';
import { WebhooksService } from './webhooks.service';

/**
 * Webhooks see every document event of the tenant whatever the document's ACL, so managing them
 * is an administration right: tenant admins only (`admin` on `webhooks`, which the built-in
 * `r:admin` policy grants).
 */
export const ADMINISTER_WEBHOOKS: Permission = { action: 'admin', resource: 'webhooks' };

const idParameter = pathParameter('id', webhookIdSchema, 'The webhook id.');

/** REST: a tenant's webhook subscriptions and their delivery log. */
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @ApiOperation({
    operationId: 'createWebhook',
    summary:
      'Subscribe a receiver URL to events; the answer carries the signing secret, once (409 webhook_limit_reached past WEBHOOK_MAX_PER_TENANT subscriptions)',
    body: createWebhookSchema,
    response: createdWebhookSchema,
    errors: [403, 409, 413],
  })
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  create(@CurrentCaller() caller: Caller, @Body() body: unknown): Promise<CreatedWebhook> {
    return this.webhooks.create(caller.tenantId, parseBody(createWebhookSchema, body));
  }

  @Get()
  @ApiOperation({
    operationId: 'listWebhooks',
    summary: 'The tenant\u2019s subscriptions',
    response: z.object({ items: z.array(webhookViewSchema) }),
    errors: [403],
  })
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  async list(@CurrentCaller() caller: Caller): Promise<{ items: WebhookView[] }> {
    return { items: await this.webhooks.list(caller.tenantId) };
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getWebhook',
    summary: 'One subscription, with whether (and why) it is disabled',
    parameters: [idParameter],
    response: webhookViewSchema,
    errors: [403, 404],
  })
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<WebhookView> {
    return this.webhooks.get(caller.tenantId, parseBody(webhookIdSchema, id));
  }

  /** `enabled: true` re-enables a subscription disabled after repeated failure. */
  @Patch(':id')
  @ApiOperation({
    operationId: 'updateWebhook',
    summary: 'Enable or disable a subscription, change its events or description',
    parameters: [idParameter],
    body: updateWebhookSchema,
    response: webhookViewSchema,
    errors: [403, 404, 413],
  })
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  update(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<WebhookView> {
    return this.webhooks.update(
      caller.tenantId,
      parseBody(webhookIdSchema, id),
      parseBody(updateWebhookSchema, body),
    );
  }

  @Delete(':id')
  @ApiOperation({
    operationId: 'deleteWebhook',
    summary: 'Remove a subscription with its deliveries and their log',
    parameters: [idParameter],
    response: z.object({ id: z.uuid() }),
    errors: [403, 404],
  })
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  delete(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<{ id: string }> {
    return this.webhooks.delete(caller.tenantId, parseBody(webhookIdSchema, id));
  }

  /** Newest first, each delivery with every try (status code, error, duration). */
  @Get(':id/deliveries')
  @ApiOperation({
    operationId: 'listWebhookDeliveries',
    summary: 'Deliveries, newest first, each with every try: status code, error, duration',
    parameters: [idParameter, ...queryParameters(deliveriesQuerySchema)],
    response: z.object({ items: z.array(deliveryViewSchema) }),
    errors: [403, 404],
  })
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  async deliveries(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Query() query: unknown,
  ): Promise<{ items: DeliveryView[] }> {
    return {
      items: await this.webhooks.deliveriesOf(
        caller.tenantId,
        parseBody(webhookIdSchema, id),
        parseBody(deliveriesQuerySchema, query),
      ),
    };
  }

  /** A new signing secret, shown once; the old one keeps signing during the grace period. */
  @Post(':id/rotate-secret')
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary:
      'Replace the signing secret (shown once); the old one keeps signing beside it for graceSeconds (default 86400), so deliveries carry both signatures meanwhile',
    parameters: [idParameter],
    body: rotateSecretSchema,
    response: rotatedSecretSchema,
    errors: [403, 404, 413],
  })
  @HttpCode(200)
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  rotateSecret(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<RotatedSecret> {
    return this.webhooks.rotateSecret(
      caller.tenantId,
      parseBody(webhookIdSchema, id),
      parseBody(rotateSecretSchema, body ?? {}),
    );
  }

  /** Sends a `webhook.test` message through the same queue, signature and retries. */
  @Post(':id/test')
  @ApiOperation({
    operationId: 'testWebhook',
    summary: 'Send a `webhook.test` message through the queue, signing and retries',
    parameters: [idParameter],
    response: z.object({ deliveryId: z.uuid(), messageId: z.string() }),
    errors: [403, 404],
  })
  @HttpCode(202)
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  test(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
  ): Promise<{ deliveryId: string; messageId: string }> {
    return this.webhooks.sendTest(caller.tenantId, parseBody(webhookIdSchema, id));
  }
}
