import type { WebhookEventType } from '@kb/contracts';

import { restCall } from '../client/rest-call';

export interface Webhook {
  id: string;
  url: string;
  events: WebhookEventType[];
  description: string;
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  consecutiveFailures: number;
  secretRotatedAt: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Delivery {
  id: string;
  messageId: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attemptCount: number;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
  attempts: Array<{
    attempt: number;
    at: string;
    succeeded: boolean;
    statusCode: number | null;
    error: string | null;
    durationMs: number;
  }>;
}

/** An answer other than 2xx, with the API's stable error code. */
export { ApiError } from '../client/rest-call';

/** webhook-service's REST API as a tenant admin calls it. */
export class WebhooksClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  create(input: {
    url: string;
    events: string[];
    secret?: string;
    description?: string;
  }): Promise<Webhook & { secret: string }> {
    return this.call('POST', '/v1/webhooks', input);
  }

  async list(): Promise<Webhook[]> {
    return (await this.call<{ items: Webhook[] }>('GET', '/v1/webhooks')).items;
  }

  get(id: string): Promise<Webhook> {
    return this.call('GET', `/v1/webhooks/${encodeURIComponent(id)}`);
  }

  update(
    id: string,
    change: { enabled?: boolean; events?: string[]; description?: string },
  ): Promise<Webhook> {
    return this.call('PATCH', `/v1/webhooks/${encodeURIComponent(id)}`, change);
  }

  delete(id: string): Promise<{ id: string }> {
    return this.call('DELETE', `/v1/webhooks/${encodeURIComponent(id)}`);
  }

  async deliveries(id: string, query: { status?: string; limit?: number }): Promise<Delivery[]> {
    const params = new URLSearchParams();
    if (query.status) params.set('status', query.status);
    if (query.limit) params.set('limit', String(query.limit));
    const path = `/v1/webhooks/${encodeURIComponent(id)}/deliveries?${params.toString()}`;
    return (await this.call<{ items: Delivery[] }>('GET', path)).items;
  }

  rotateSecret(
    id: string,
    input: { secret?: string; graceSeconds?: number },
  ): Promise<{ id: string; secret: string; previousSecretExpiresAt: string | null }> {
    return this.call('POST', `/v1/webhooks/${encodeURIComponent(id)}/rotate-secret`, input);
  }

  test(id: string): Promise<{ deliveryId: string; messageId: string }> {
    return this.call('POST', `/v1/webhooks/${encodeURIComponent(id)}/test`);
  }

  private call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return restCall<T>(this.baseUrl, this.token, method, path, body);
  }
}
