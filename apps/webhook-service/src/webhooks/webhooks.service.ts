import { randomUUID } from 'node:crypto';

import { WEBHOOK_TEST_EVENT, type WebhookPayload } from '@kb/contracts';
import { Inject, Injectable } from '@nestjs/common';

import { WEBHOOK_CONFIG, type WebhookConfig } from '../config/webhook.config';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { checkSecret, newSecret } from '../deliveries/signing';
import { messageIdOf, type WebhookEvent } from '../deliveries/webhook-event.mapper';
import { CLOCK, type Clock } from '../platform/tokens';
import { validateReceiverUrl } from './receiver-url';
import type {
  CreatedWebhook,
  CreateWebhook,
  DeliveriesQuery,
  DeliveryView,
  RotatedSecret,
  RotateSecret,
  UpdateWebhook,
  WebhookView,
} from './webhook.model';
import { webhookLimitReached, webhookNotFound } from './webhooks.errors';
import { WebhooksRepository } from './webhooks.repository';

/** The body every receiver gets: `{ type, timestamp, data }`, serialized once per delivery. */
export const payloadOf = (type: string, timestamp: string, data: unknown): string =>
  JSON.stringify({ type, timestamp, data } satisfies WebhookPayload);

/** A tenant's subscriptions and what is owed to them. Callers are tenant admins (the controller). */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: DeliveriesRepository,
    @Inject(WEBHOOK_CONFIG)
    private readonly config: Pick<
      WebhookConfig,
      'WEBHOOK_ALLOW_PRIVATE_URLS' | 'WEBHOOK_MAX_PER_TENANT'
    >,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async create(tenantId: string, input: CreateWebhook): Promise<CreatedWebhook> {
    const url = await validateReceiverUrl(input.url, {
      allowPrivate: this.config.WEBHOOK_ALLOW_PRIVATE_URLS,
    });
    const secret = input.secret === undefined ? newSecret() : checkSecret(input.secret);
    const view = await this.webhooks.insert(
      tenantId,
      {
        id: randomUUID(),
        url: url.toString(),
        events: input.events,
        secret,
        description: input.description,
        at: this.clock(),
      },
      this.config.WEBHOOK_MAX_PER_TENANT,
    );
    if (!view) throw webhookLimitReached(this.config.WEBHOOK_MAX_PER_TENANT);
    return { ...view, secret };
  }

  list(tenantId: string): Promise<WebhookView[]> {
    return this.webhooks.list(tenantId);
  }

  async get(tenantId: string, id: string): Promise<WebhookView> {
    const webhook = await this.webhooks.get(tenantId, id);
    if (!webhook) throw webhookNotFound(id);
    return webhook;
  }

  async update(tenantId: string, id: string, change: UpdateWebhook): Promise<WebhookView> {
    const updated = await this.webhooks.update(tenantId, id, change, this.clock());
    if (!updated) throw webhookNotFound(id);
    return updated;
  }

  /** A new signing secret; the old one also signs for `graceSeconds` more. */
  async rotateSecret(tenantId: string, id: string, input: RotateSecret): Promise<RotatedSecret> {
    const secret = input.secret === undefined ? newSecret() : checkSecret(input.secret);
    const at = this.clock();
    const previousUntil =
      input.graceSeconds > 0 ? new Date(at.getTime() + input.graceSeconds * 1000) : null;
    const rotated = await this.webhooks.rotateSecret(tenantId, id, secret, previousUntil, at);
    if (!rotated) throw webhookNotFound(id);
    return {
      id,
      secret,
      previousSecretExpiresAt: rotated.previousSecretExpiresAt,
      rotatedAt: at.toISOString(),
    };
  }

  async delete(tenantId: string, id: string): Promise<{ id: string }> {
    if (!(await this.webhooks.delete(tenantId, id))) throw webhookNotFound(id);
    return { id };
  }

  async deliveriesOf(
    tenantId: string,
    id: string,
    query: DeliveriesQuery,
  ): Promise<DeliveryView[]> {
    await this.get(tenantId, id);
    return this.deliveries.list(tenantId, id, query);
  }

  /** Owes the subscription a `webhook.test` message now, whatever events it asked for. */
  async sendTest(tenantId: string, id: string): Promise<{ deliveryId: string; messageId: string }> {
    await this.get(tenantId, id);
    const now = this.clock();
    const messageId = messageIdOf(WEBHOOK_TEST_EVENT, tenantId, id, randomUUID());
    const deliveryId = await this.deliveries.enqueueTo(
      tenantId,
      id,
      {
        messageId,
        eventType: WEBHOOK_TEST_EVENT,
        body: payloadOf(WEBHOOK_TEST_EVENT, now.toISOString(), { webhookId: id }),
      },
      now,
    );
    return { deliveryId, messageId };
  }

  /** An event from Kafka: owed to every enabled subscription of the tenant that asked for it. */
  record(tenantId: string, event: WebhookEvent): Promise<number> {
    return this.recordAll([{ tenantId, event }]);
  }

  /** A consumed batch of events (`record`), in one statement; the deliveries it created. */
  recordAll(events: Array<{ tenantId: string; event: WebhookEvent }>): Promise<number> {
    return this.deliveries.enqueue(
      events.map(({ tenantId, event }) => ({
        tenantId,
        messageId: event.messageId,
        eventType: event.type,
        occurredAt: new Date(event.occurredAt),
        body: payloadOf(event.type, event.occurredAt, event.data),
      })),
      this.clock(),
    );
  }
}
