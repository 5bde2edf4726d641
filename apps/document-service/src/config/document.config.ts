import { tmpdir } from 'node:os';

import {
  accessConfigSchema,
  authConfigSchema,
  baseConfigSchema,
  embeddingConfigSchema,
  env,
  httpConfigSchema,
  kafkaConfigSchema,
  loadConfig,
  rateLimitConfigSchema,
  redisConfigSchema,
  s3ConfigSchema,
} from '@kb/config';
import { z } from 'zod';

import { sourceAllowlistSetting } from '../sources/source-grants';

export const documentConfigSchema = baseConfigSchema
  .extend(httpConfigSchema(3001).shape)
  .extend(kafkaConfigSchema.shape)
  .extend(s3ConfigSchema.shape)
  .extend(authConfigSchema.shape)
  .extend(accessConfigSchema.shape)
  .extend(redisConfigSchema.shape)
  .extend(rateLimitConfigSchema.shape)
  .extend({
    DATABASE_URL: env.url(),
    DB_SCHEMA: z.string().default('document_service'),
    MIGRATE_ON_START: env.bool(true),
    KAFKA_GROUP_ID: z.string().default('document-service'),
    MAX_UPLOAD_BYTES: env.positiveInt(100 * 1024 * 1024),
    /**
     * The buckets and prefixes each tenant's S3 sources may read (JSON, tenant id to
     * `[{bucket, prefix}]`); the default grants nothing (sources/source-grants.ts).
     */
    SOURCE_ALLOWLIST: sourceAllowlistSetting,
    /** A sync refuses a source with more objects than this under its prefix (nothing is changed). */
    SOURCE_SYNC_MAX_FILES: env.positiveInt(10_000),
    /** How often each replica looks for sources whose schedule is due (ADR 43); 0: never. */
    SOURCE_SCHEDULE_TICK_MS: z.coerce.number().int().min(0).default(30_000),
    /** How often each replica deletes documents whose retention is due (ADR 52); 0: never. */
    RETENTION_TICK_MS: z.coerce.number().int().min(0).default(60_000),
    /** How often each replica strips ended grants from documents' ACLs (ADR 54); 0: never. */
    GRANT_EXPIRY_TICK_MS: z.coerce.number().int().min(0).default(60_000),
    /** Where uploads are spooled while they are hashed and streamed to S3; removed afterwards. */
    UPLOAD_TMP_DIR: z.string().default(tmpdir()),
    /** How often the outbox relay looks for rows no wake announced (outbox.relay.ts). */
    OUTBOX_POLL_MS: env.positiveInt(5_000),
    /** How long a read's audit record waits for others to share its drain. */
    OUTBOX_BATCH_MS: env.positiveInt(200),
    /** How often stalled documents are looked for; 0 turns reconciliation off. */
    RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
    /**
     * How often one replica sends documents' readers to indexing, which repairs any index that
     * differs (ADR 18); 0 turns it off. A pass sends the documents changed since the one before
     * it (and one interval more), so the bound on a revoked reader still finding a document after
     * a failed ACL update is this interval plus one pass.
     */
    ACCESS_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(300_000),
    /**
     * How often the access pass sends every document rather than the changed ones, and the
     * membership look reads every document rather than the changed ones (24 h): what changed
     * outside a document's own changes (an index restored from a backup, a row edited by hand)
     * converges within this. 0: every pass and look reads every document.
     */
    RECONCILE_FULL_INTERVAL_MS: z.coerce.number().int().min(0).default(86_400_000),
    /**
     * Documents a second an access pass sends at most (0: no limit): a full pass at a million
     * documents then spreads its ~230 s of CPU (Kafka, Postgres and five consumers) over about 17
     * minutes instead of a burst (docs/adr/0018).
     */
    ACCESS_RECONCILE_RATE: z.coerce.number().int().min(0).default(1_000),
    /** A version with no status change for this long is stalled. */
    STALLED_AFTER_MS: env.positiveInt(15 * 60_000),
    /** Times a stalled version is sent through the pipeline again before it is failed. */
    RECONCILE_MAX_REDRIVES: z.coerce.number().int().min(0).default(3),
    /** The model new knowledge bases embed with unless they name another. */
    EMBEDDING_MODEL: embeddingConfigSchema.shape.EMBEDDING_MODEL,
    /** The default pipeline's chunker (documents in no configured knowledge base). */
    CHUNK_SIZE: env.positiveInt(1000),
    CHUNK_OVERLAP: z.coerce.number().int().min(0).default(150),
    /**
     * Every tenant's limits (docs/adr/0053); 0 is none. A tenant admin may set tighter ones
     * (`PUT /v1/quotas`), never looser.
     */
    QUOTA_MAX_DOCUMENTS: z.coerce.number().int().min(0).default(0),
    QUOTA_MAX_BYTES: z.coerce.number().int().min(0).default(0),
    QUOTA_MAX_KNOWLEDGE_BASES: z.coerce.number().int().min(0).default(0),
    /** Counted and refused by query-service, which reads it through `GET /v1/quotas`. */
    QUOTA_MAX_SEARCHES_PER_DAY: z.coerce.number().int().min(0).default(0),
    /** embedding-service's REST API: which models it serves, and their dimensions. */
    EMBEDDING_SERVICE_URL: z.url().default('http://127.0.0.1:3003'),
  });

export type DocumentConfig = z.infer<typeof documentConfigSchema>;

export const DOCUMENT_CONFIG = Symbol('DOCUMENT_CONFIG');

export const loadDocumentConfig = (): DocumentConfig => loadConfig(documentConfigSchema);
