import {
  baseConfigSchema,
  embeddingConfigSchema,
  env,
  httpConfigSchema,
  kafkaConfigSchema,
  loadConfig,
  requireEmbeddingProviderSettings,
  s3ConfigSchema,
} from '@kb/config';
import { z } from 'zod';

export const embeddingServiceConfigSchema = baseConfigSchema
  .extend(httpConfigSchema(3003).shape)
  .extend(kafkaConfigSchema.shape)
  .extend(s3ConfigSchema.shape)
  .extend(embeddingConfigSchema.shape)
  .extend({
    KAFKA_GROUP_ID: z.string().default('embedding-service'),
    /** Texts per model call (and per request to an embedding API). */
    EMBEDDING_BATCH_SIZE: env.positiveInt(32),
    /** Postgres for the embedding cache (schema embedding_cache); unset turns the cache off. */
    DATABASE_URL: z.url().optional(),
  })
  .superRefine(requireEmbeddingProviderSettings);

export type EmbeddingServiceConfig = z.infer<typeof embeddingServiceConfigSchema>;
export const EMBEDDING_CONFIG = Symbol('EMBEDDING_CONFIG');
export const loadEmbeddingConfig = (): EmbeddingServiceConfig =>
  loadConfig(embeddingServiceConfigSchema);
