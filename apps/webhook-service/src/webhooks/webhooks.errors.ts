import { DomainError, ErrorKind } from '@kb/errors';

export enum WebhookErrorCode {
  NotFound = 'webhook_not_found',
  /** Not http(s), malformed, with credentials, unresolvable, or a non-public address (SSRF). */
  InvalidUrl = 'invalid_webhook_url',
  /** Not `whsec_` and base64 of 24 to 64 bytes. */
  InvalidSecret = 'invalid_webhook_secret',
  /** The tenant has WEBHOOK_MAX_PER_TENANT subscriptions already. */
  LimitReached = 'webhook_limit_reached',
}

const KIND: Record<WebhookErrorCode, ErrorKind> = {
  [WebhookErrorCode.NotFound]: ErrorKind.NotFound,
  [WebhookErrorCode.InvalidUrl]: ErrorKind.InvalidArgument,
  [WebhookErrorCode.InvalidSecret]: ErrorKind.InvalidArgument,
  [WebhookErrorCode.LimitReached]: ErrorKind.FailedPrecondition,
};

export class WebhookError extends DomainError<WebhookErrorCode> {
  constructor(code: WebhookErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}

export const webhookNotFound = (id: string): WebhookError =>
  new WebhookError(WebhookErrorCode.NotFound, `webhook ${id} not found`);

export const webhookLimitReached = (max: number): WebhookError =>
  new WebhookError(
    WebhookErrorCode.LimitReached,
    `a tenant may have at most ${max} webhooks: delete one first`,
  );
