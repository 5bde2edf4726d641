import {
  type JsonBodyOf,
  type QueryOf,
  type WebhookDelivery,
  type WebhookOperations,
  type WebhookServiceClient,
  webhookServiceClient,
  type WebhookView,
} from '@kb/api-client';

import { answerOf } from '../client/rest-call';

/** A webhook as webhook-service shows it. */
export type Webhook = WebhookView;
/** A delivery of a webhook, with its attempts. */
export type Delivery = WebhookDelivery;

type CreateBody = JsonBodyOf<WebhookOperations['createWebhook']>;
type DeliveriesQuery = QueryOf<WebhookOperations['listWebhookDeliveries']>;

/** An answer other than 2xx, with the API's stable error code. */
export { ApiError } from '../client/rest-call';

/**
 * webhook-service's REST API as a tenant admin calls it, through the client generated from its
 * OpenAPI document. Event names and statuses come from the command line as they were typed:
 * webhook-service refuses an unknown one with 400 invalid_argument.
 */
export class WebhooksClient {
  private readonly api: WebhookServiceClient;

  constructor(baseUrl: string, token: string) {
    this.api = webhookServiceClient({ baseUrl, token });
  }

  create(input: { url: string; events: string[]; secret?: string; description?: string }) {
    const body = { ...input, events: input.events as CreateBody['events'] };
    return answerOf(this.api.POST('/v1/webhooks', { body }));
  }

  async list(): Promise<Webhook[]> {
    return (await answerOf(this.api.GET('/v1/webhooks'))).items;
  }

  get(id: string): Promise<Webhook> {
    return answerOf(this.api.GET('/v1/webhooks/{id}', { params: { path: { id } } }));
  }

  update(
    id: string,
    change: { enabled?: boolean; events?: string[]; description?: string },
  ): Promise<Webhook> {
    const { events, ...rest } = change;
    const body = { ...rest, ...(events ? { events: events as CreateBody['events'] } : {}) };
    return answerOf(this.api.PATCH('/v1/webhooks/{id}', { params: { path: { id } }, body }));
  }

  delete(id: string): Promise<{ id: string }> {
    return answerOf(this.api.DELETE('/v1/webhooks/{id}', { params: { path: { id } } }));
  }

  async deliveries(id: string, query: { status?: string; limit?: number }): Promise<Delivery[]> {
    const params = {
      path: { id },
      query: {
        ...(query.status ? { status: query.status as DeliveriesQuery['status'] } : {}),
        ...(query.limit ? { limit: query.limit } : {}),
      },
    };
    return (await answerOf(this.api.GET('/v1/webhooks/{id}/deliveries', { params }))).items;
  }

  rotateSecret(id: string, input: { secret?: string; graceSeconds?: number }) {
    return answerOf(
      this.api.POST('/v1/webhooks/{id}/rotate-secret', { params: { path: { id } }, body: input }),
    );
  }

  test(id: string) {
    return answerOf(this.api.POST('/v1/webhooks/{id}/test', { params: { path: { id } } }));
  }
}
