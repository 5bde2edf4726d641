import { randomBytes } from 'node:crypto';

import { Webhook } from 'standardwebhooks';

import { WebhookError, WebhookErrorCode } from '../webhooks/webhooks.errors';

const PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export const newSecret = (): string => `${PREFIX}${randomBytes(32).toString('base64')}`;

/** Refuses a secret that is not `whsec_` + base64 of 24 to 64 bytes (Standard Webhooks). */
export function checkSecret(secret: string): string {
  const body = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : '';
  const bytes = /^[A-Za-z0-9+/]+={0,2}$/.test(body) ? Buffer.from(body, 'base64').length : 0;
  if (bytes < 24 || bytes > 64) {
    throw new WebhookError(
      WebhookErrorCode.InvalidSecret,
      'secret: must be whsec_ followed by the base64 of 24 to 64 random bytes',
    );
  }
  return secret;
}

/** The three headers of one signed request (Standard Webhooks). */
export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs `body` for a receiver: `v1,` + base64 HMAC-SHA256 over `id.timestamp.body` with each
 * decoded secret, through the Standard Webhooks reference library. Several secrets (during a
 * rotation) give several signatures, space-separated: a receiver holding either secret verifies.
 */
export function signedHeaders(
  secrets: readonly string[],
  messageId: string,
  at: Date,
  body: string,
): SignatureHeaders {
  const timestamp = Math.floor(at.getTime() / 1000);
  const signedAt = new Date(timestamp * 1000);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets
      .map((secret) => new Webhook(secret).sign(messageId, signedAt, body))
      .join(' '),
  };
}
