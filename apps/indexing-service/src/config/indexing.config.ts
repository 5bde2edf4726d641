import {
  baseConfigSchema,
  env,
  httpConfigSchema,
  kafkaConfigSchema,
  loadConfig,
  s3ConfigSchema,
  vectorStoreConfigSchema,
} from '@kb/config';
import { z } from 'zod';

export const indexingConfigSchema = baseConfigSchema
  .extend(httpConfigSchema(3004).shape)
  .extend(kafkaConfigSchema.shape)
  .extend(s3ConfigSchema.shape)
  .extend(vectorStoreConfigSchema.shape)
  .extend({
    KAFKA_GROUP_ID: z.string().default('indexing-service'),
    /** Postgres holding the lexical index (schema `search_index`, migrated by this service). */
    DATABASE_URL: env.url(),
    MIGRATE_ON_START: env.bool(true),
    /** How often the orphan sweep runs over both indexes; 0 turns it off. */
    ORPHAN_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(600_000),
  });

export type IndexingConfig = z.infer<typeof indexingConfigSchema>;
export const INDEXING_CONFIG = Symbol('INDEXING_CONFIG');
export const loadIndexingConfig = (): IndexingConfig => loadConfig(indexingConfigSchema);
