import {
  baseConfigSchema,
  env,
  httpConfigSchema,
  kafkaConfigSchema,
  loadConfig,
  redisConfigSchema,
  s3ConfigSchema,
  vectorStoreConfigSchema,
} from '@kb/config';
import { z } from 'zod';

export const indexingConfigSchema = baseConfigSchema
  .extend(httpConfigSchema(3004).shape)
  .extend(kafkaConfigSchema.shape)
  .extend(s3ConfigSchema.shape)
  .extend(vectorStoreConfigSchema.shape)
  // query-service's Redis: a delete removes the tenant's cached search results, which hold chunk
  // text (docs/adr/0019). REDIS_URL unset: no cache to clean (query-service caches nothing either).
  .extend(redisConfigSchema.shape)
  .extend({
    KAFKA_GROUP_ID: z.string().default('indexing-service'),
    /** Postgres holding the lexical index (schema `search_index`, migrated by this service). */
    DATABASE_URL: env.url(),
    /** Apply pending migrations at start; the chart turns it off when its Helm hook migrates. */
    MIGRATE_ON_START: env.bool(true),
    /**
     * Dimensions of the models in use (comma-separated, e.g. `384`): `migrate` creates their
     * pgvector tables up front. With MIGRATE_ON_START a dimension's table is also created when its
     * first vectors arrive; without it, vectors of an unlisted dimension are refused.
     */
    VECTOR_DIMENSIONS: z
      .string()
      .default('')
      .transform((list) =>
        list
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean)
          .map(Number),
      )
      .pipe(z.array(z.number().int().positive())),
    /**
     * After every generation bump, bump again this long after the tenant's latest write, so a
     * result an eventually consistent store (Pinecone) gave from before the write is not served
     * from the cache (docs/adr/0020). Default: 10 s with Pinecone, 0 (off) with pgvector.
     */
    GENERATION_SETTLE_MS: z.coerce.number().int().min(0).optional(),
    /** How often the orphan sweep runs over both indexes; 0 turns it off. */
    ORPHAN_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(600_000),
  });

export type IndexingConfig = z.infer<typeof indexingConfigSchema>;
export const INDEXING_CONFIG = Symbol('INDEXING_CONFIG');
export const loadIndexingConfig = (): IndexingConfig => loadConfig(indexingConfigSchema);
