import { DomainError, ErrorKind } from '@kb/errors';

export enum WebhookErrorCode {
  NotFound = 'webhook_not_found',
  /** Not http(s), malformed, with credentials, unresolvable, or a non-public address (SSRF). */
  InvalidUrl = 'invalid_webhook_url',
  /** Not `whsec_` and base64 of 24 to 64 bytes. */
  InvalidSecret = 'invalid_webhook_secret',
}

const KIND: Record<WebhookErrorCode, ErrorKind> = {
  [WebhookErrorCode.NotFound]: ErrorKind.NotFound,
  [WebhookErrorCode.InvalidUrl]: ErrorKind.InvalidArgument,
  [WebhookErrorCode.InvalidSecret]: ErrorKind.InvalidArgument,
};

export class WebhookError extends DomainError<WebhookErrorCode> {
  constructor(code: WebhookErrorCode, message: string) {
    super(code, KIND[code], message);
  }
}

export const webhookNotFound = (id: string): WebhookError =>
  new WebhookError(WebhookErrorCode.NotFound, `webhook ${id} not found`);
