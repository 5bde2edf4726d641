import {
  accessConfigSchema,
  authConfigSchema,
  baseConfigSchema,
  env,
  httpConfigSchema,
  kafkaConfigSchema,
  loadConfig,
  rateLimitConfigSchema,
  redisConfigSchema,
} from '@kb/config';
import { z } from 'zod';

import { isSecretKey } from '../webhooks/secret-box';

export const webhookConfigSchema = baseConfigSchema
  .extend(httpConfigSchema(3007).shape)
  .extend(kafkaConfigSchema.shape)
  .extend(authConfigSchema.shape)
  .extend(accessConfigSchema.shape)
  .extend(redisConfigSchema.shape)
  .extend(rateLimitConfigSchema.shape)
  .extend({
    /** Postgres holding subscriptions, deliveries and their attempts (in schema DB_SCHEMA). */
    DATABASE_URL: env.url(),
    DB_SCHEMA: z.string().default('webhook_service'),
    /** Apply pending migrations at start; the chart turns it off when its Helm hook migrates. */
    MIGRATE_ON_START: env.bool(true),
    KAFKA_GROUP_ID: z.string().default('webhook-service'),
    /**
     * Receivers on loopback, private, link-local or other non-public addresses are refused unless
     * this is true (server-side request forgery). `npm start` and the tests turn it on: their
     * receivers run on 127.0.0.1. Leave it off in a cluster.
     */
    WEBHOOK_ALLOW_PRIVATE_URLS: env.bool(false),
    /** Tries per delivery (the first included) before it is given up as failed. */
    WEBHOOK_MAX_ATTEMPTS: env.positiveInt(8),
    /** The wait before the second try; each further wait doubles, up to WEBHOOK_RETRY_MAX_MS. */
    WEBHOOK_RETRY_BASE_MS: env.positiveInt(30_000),
    WEBHOOK_RETRY_MAX_MS: env.positiveInt(6 * 3_600_000),
    /**
     * A subscription is disabled once its tries have failed this many times in a row and for at
     * least WEBHOOK_DISABLE_AFTER_MS since the first of them: a burst of failures while a
     * receiver restarts does not disable it, a receiver gone for a day does.
     */
    WEBHOOK_DISABLE_AFTER_FAILURES: env.positiveInt(20),
    WEBHOOK_DISABLE_AFTER_MS: z.coerce.number().int().min(0).default(86_400_000),
    /**
     * How long a receiver has to answer one try, connection to last byte. Five seconds: a receiver
     * should acknowledge and work later; a slow one holds one of its tenant's slots that long.
     */
    WEBHOOK_TIMEOUT_MS: env.positiveInt(5_000),
    /**
     * How often the dispatcher looks for due deliveries, and how many it sends at once (a pool:
     * each finished try frees its slot for the next due delivery at once).
     */
    WEBHOOK_DISPATCH_INTERVAL_MS: env.positiveInt(500),
    WEBHOOK_DISPATCH_CONCURRENCY: env.positiveInt(16),
    /**
     * The most deliveries of one tenant in flight at once, over every replica (review N7): a
     * tenant whose receivers are slow or failing uses this many slots, and the others go on.
     */
    WEBHOOK_TENANT_CONCURRENCY: env.positiveInt(4),
    /** The most subscriptions a tenant may have; one more is refused (409 webhook_limit_reached). */
    WEBHOOK_MAX_PER_TENANT: env.positiveInt(25),
    /**
     * Finished deliveries (succeeded or given up) and their tries are kept this many days, then
     * pruned, oldest first, every WEBHOOK_RETENTION_INTERVAL_MS. Pending ones are never pruned.
     */
    WEBHOOK_DELIVERY_RETENTION_DAYS: env.positiveInt(30),
    /**
     * The key that encrypts the subscriptions' signing secrets in Postgres (AES-256-GCM, review
     * N11): the base64 of 32 random bytes (`openssl rand -base64 32`). Required; only
     * webhook-service holds it. Locally scripts/infra/env.sh generates one under KB_HOME.
     */
    WEBHOOK_SECRET_KEY: z
      .string()
      .refine(isSecretKey, 'WEBHOOK_SECRET_KEY must be the base64 of 32 random bytes'),
    /**
     * Keys that sealed secrets before WEBHOOK_SECRET_KEY replaced them, comma-separated, same
     * shape: they still open, and the service re-seals what they sealed with the new key (at
     * start, then hourly); drop them once `kb_webhook_secrets_sealed_total` stops growing.
     */
    WEBHOOK_SECRET_PREVIOUS_KEYS: z
      .string()
      .default('')
      .transform((value) =>
        value
          .split(',')
          .map((key) => key.trim())
          .filter((key) => key.length > 0),
      )
      .refine(
        (keys) => keys.every(isSecretKey),
        'WEBHOOK_SECRET_PREVIOUS_KEYS must be base64 keys of 32 bytes, comma-separated',
      ),
    WEBHOOK_RETENTION_INTERVAL_MS: env.positiveInt(3_600_000),
  });
export type WebhookConfig = z.infer<typeof webhookConfigSchema>;
export const WEBHOOK_CONFIG = Symbol('WEBHOOK_CONFIG');
export const loadWebhookConfig = (): WebhookConfig => loadConfig(webhookConfigSchema);
