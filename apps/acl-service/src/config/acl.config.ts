import {
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

export const aclConfigSchema = baseConfigSchema
  .extend(httpConfigSchema(3006).shape)
  .extend(kafkaConfigSchema.shape)
  .extend(authConfigSchema.shape)
  .extend(redisConfigSchema.shape)
  .extend(rateLimitConfigSchema.shape)
  .extend({
    GRPC_HOST: z.string().default('127.0.0.1'),
    GRPC_PORT: env.port(50061),
    /** Postgres holding the casbin policy and the audit log (in schema DB_SCHEMA). */
    DATABASE_URL: env.url(),
    DB_SCHEMA: z.string().default('acl_service'),
    /** Apply pending migrations at start; the chart turns it off when its Helm hook migrates. */
    MIGRATE_ON_START: env.bool(true),
    KAFKA_GROUP_ID: z.string().default('acl-service'),
    /**
     * How often the casbin policy is rebuilt from the database whatever happened (0: never).
     * Requests already rebuild it when the tenant's policy version moved (ADR 18).
     */
    POLICY_RELOAD_INTERVAL_MS: z.coerce.number().int().min(0).default(300_000),
    /**
     * How often ended grants are removed from the stored policy, audited as `system` (0: never).
     * They stop being honoured at their end whatever this is (ADR 54).
     */
    GRANT_EXPIRY_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  });
export type AclConfig = z.infer<typeof aclConfigSchema>;
export const ACL_CONFIG = Symbol('ACL_CONFIG');
export const loadAclConfig = (): AclConfig => loadConfig(aclConfigSchema);
