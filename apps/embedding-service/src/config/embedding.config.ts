import {
  accessConfigSchema,
  authConfigSchema,
  baseConfigSchema,
  embeddingConfigSchema,
  env,
  httpConfigSchema,
  kafkaConfigSchema,
  loadConfig,
  modelApiConfigSchema,
  rateLimitConfigSchema,
  redisConfigSchema,
  requireEmbeddingProviderSettings,
  s3ConfigSchema,
} from '@kb/config';
import { z } from 'zod';

/** The embedding cache's database, which is all that migrating reads. */
export const cacheConfigSchema = z.object({
  /** Postgres for the embedding cache (schema embedding_cache); unset turns the cache off. */
  DATABASE_URL: z.url().optional(),
});

export const embeddingServiceConfigSchema = baseConfigSchema
  .extend(httpConfigSchema(3003).shape)
  .extend(kafkaConfigSchema.shape)
  .extend(s3ConfigSchema.shape)
  .extend(embeddingConfigSchema.shape)
  // Bearer tokens for the OpenAI-compatible API (POST /v1/embeddings, GET /v1/models).
  .extend(authConfigSchema.shape)
  // POST /v1/embeddings (review N5): acl-service for its permission, the `model` rate-limit
  // budget (shared through Redis when REDIS_URL is set), and its own queue for the model.
  .extend(accessConfigSchema.shape)
  .extend(redisConfigSchema.shape)
  .extend(rateLimitConfigSchema.shape)
  .extend(modelApiConfigSchema.shape)
  .extend({
    KAFKA_GROUP_ID: z.string().default('embedding-service'),
    /** Texts per model call (and per request to an embedding API). */
    EMBEDDING_BATCH_SIZE: env.positiveInt(32),
    /** Apply pending migrations at start; the chart turns it off when its Helm hook migrates. */
    MIGRATE_ON_START: env.bool(true),
  })
  .extend(cacheConfigSchema.shape)
  .superRefine(requireEmbeddingProviderSettings);

export type EmbeddingServiceConfig = z.infer<typeof embeddingServiceConfigSchema>;
export const EMBEDDING_CONFIG = Symbol('EMBEDDING_CONFIG');
export const loadEmbeddingConfig = (): EmbeddingServiceConfig =>
  loadConfig(embeddingServiceConfigSchema);
