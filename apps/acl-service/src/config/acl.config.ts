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
  });
export type AclConfig = z.infer<typeof aclConfigSchema>;
export const ACL_CONFIG = Symbol('ACL_CONFIG');
export const loadAclConfig = (): AclConfig => loadConfig(aclConfigSchema);
