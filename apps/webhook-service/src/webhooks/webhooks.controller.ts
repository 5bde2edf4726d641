import type { Permission } from '@kb/auth';
import type { Caller } from '@kb/auth';
import { Authenticated, CurrentCaller, parseBody } from '@kb/http';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';

import {
  type CreatedWebhook,
  createWebhookSchema,
  deliveriesQuerySchema,
  type DeliveryView,
  type RotatedSecret,
  rotateSecretSchema,
  updateWebhookSchema,
  webhookIdSchema,
  type WebhookView,
} from './webhook.model';
import { WebhooksService } from './webhooks.service';

/**
 * Webhooks see every document event of the tenant whatever the document's ACL, so managing them
 * is an administration right: tenant admins only (`admin` on `webhooks`, which the built-in
 * `r:admin` policy grants).
 */
export const ADMINISTER_WEBHOOKS: Permission = { action: 'admin', resource: 'webhooks' };

/** REST: a tenant's webhook subscriptions and their delivery log. */
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  create(@CurrentCaller() caller: Caller, @Body() body: unknown): Promise<CreatedWebhook> {
    return this.webhooks.create(caller.tenantId, parseBody(createWebhookSchema, body));
  }

  @Get()
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  async list(@CurrentCaller() caller: Caller): Promise<{ items: WebhookView[] }> {
    return { items: await this.webhooks.list(caller.tenantId) };
  }

  @Get(':id')
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  get(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<WebhookView> {
    return this.webhooks.get(caller.tenantId, parseBody(webhookIdSchema, id));
  }

  /** `enabled: true` re-enables a subscription disabled after repeated failure. */
  @Patch(':id')
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
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  delete(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<{ id: string }> {
    return this.webhooks.delete(caller.tenantId, parseBody(webhookIdSchema, id));
  }

  /** Newest first, each delivery with every try (status code, error, duration). */
  @Get(':id/deliveries')
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
  @HttpCode(202)
  @Authenticated({ permission: ADMINISTER_WEBHOOKS, rateLimit: 'admin' })
  test(
    @CurrentCaller() caller: Caller,
    @Param('id') id: string,
  ): Promise<{ deliveryId: string; messageId: string }> {
    return this.webhooks.sendTest(caller.tenantId, parseBody(webhookIdSchema, id));
  }
}
