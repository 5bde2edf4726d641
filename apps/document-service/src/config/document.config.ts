import {
  accessConfigSchema,
  authConfigSchema,
  baseConfigSchema,
  env,
  httpConfigSchema,
  kafkaConfigSchema,
  loadConfig,
  s3ConfigSchema,
} from '@kb/config';
import { z } from 'zod';

export const documentConfigSchema = baseConfigSchema
  .extend(httpConfigSchema(3001).shape)
  .extend(kafkaConfigSchema.shape)
  .extend(s3ConfigSchema.shape)
  .extend(authConfigSchema.shape)
  .extend(accessConfigSchema.shape)
  .extend({
    DATABASE_URL: env.url(),
    DB_SCHEMA: z.string().default('document_service'),
    MIGRATE_ON_START: env.bool(true),
    KAFKA_GROUP_ID: z.string().default('document-service'),
    MAX_UPLOAD_BYTES: env.positiveInt(50 * 1024 * 1024),
    OUTBOX_POLL_MS: env.positiveInt(200),
    /** The model new knowledge bases embed with unless they name another. */
    EMBEDDING_MODEL: z.string().default('all-MiniLM-L6-v2'),
  });

export type DocumentConfig = z.infer<typeof documentConfigSchema>;

export const DOCUMENT_CONFIG = Symbol('DOCUMENT_CONFIG');

export const loadDocumentConfig = (): DocumentConfig => loadConfig(documentConfigSchema);
