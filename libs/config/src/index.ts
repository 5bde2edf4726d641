import { z } from 'zod';

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates environment variables against a zod schema, once at boot.
 * Every problem is reported together, named by its variable, so a misconfigured pod fails with one clear message.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
    );
  }
  return result.data;
}

/** Common variable shapes. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  url: () => z.url(),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1'),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
};

/** Settings every service shares. */
export const baseConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
});

/**
 * Kafka settings shared by every service that produces or consumes events. Without TLS and SASL
 * any pod that reaches the brokers can publish (forged ACL changes, audit records): production
 * clusters set `KAFKA_SSL=true` and a SASL mechanism, with the password from a Secret.
 * `createKafka` (libs/kafka) refuses incomplete combinations at boot.
 */
export const kafkaConfigSchema = z.object({
  KAFKA_BROKERS: z
    .string()
    .min(1)
    .transform((v) => v.split(',').map((b) => b.trim())),
  /** TLS to the brokers (verified against the system CAs, or KAFKA_SSL_CA_FILE). */
  KAFKA_SSL: env.bool(false),
  /** A PEM bundle of the CA that signed the brokers' certificates. */
  KAFKA_SSL_CA_FILE: z.string().min(1).optional(),
  /** Client certificate and key (PEM files) for mutual TLS. */
  KAFKA_SSL_CERT_FILE: z.string().min(1).optional(),
  KAFKA_SSL_KEY_FILE: z.string().min(1).optional(),
  KAFKA_SASL_MECHANISM: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional(),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  /** A secret: from a Secret, never a ConfigMap, never logged. */
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
});

export type KafkaConfig = z.infer<typeof kafkaConfigSchema>;

/**
 * Redis for caches and rate limits; unset REDIS_URL turns both to their local fallbacks (no
 * cache; limits counted per replica). `rediss://` is TLS; credentials come from the two
 * variables below (a Secret), never from the URL in a ConfigMap.
 */
export const redisConfigSchema = z.object({
  REDIS_URL: z
    .url()
    .refine((url) => /^rediss?:/.test(url), 'must be redis:// or rediss:// (TLS)')
    .optional(),
  REDIS_USERNAME: z.string().min(1).optional(),
  REDIS_PASSWORD: z.string().min(1).optional(),
  REDIS_TLS_CA_FILE: z.string().min(1).optional(),
});

/** Calls per window; 0 turns that limit off. */
const callsPerWindow = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/**
 * Rate limits per caller (tenant + user) and per tenant, per budget (docs/adr/0020), counted in
 * Redis across replicas. A service reads the budgets its handlers draw on.
 */
export const rateLimitConfigSchema = z.object({
  RATE_LIMIT_WINDOW_SECONDS: env.positiveInt(60),
  /** Search and context, REST and gRPC (query-service). */
  RATE_LIMIT_SEARCH_PER_PRINCIPAL: callsPerWindow(600),
  RATE_LIMIT_SEARCH_PER_TENANT: callsPerWindow(6000),
  /** Uploads and content replacements (document-service). */
  RATE_LIMIT_UPLOAD_PER_PRINCIPAL: callsPerWindow(120),
  RATE_LIMIT_UPLOAD_PER_TENANT: callsPerWindow(1200),
  /** Administration: ACL policy and audit (acl-service), knowledge bases (document-service). */
  RATE_LIMIT_ADMIN_PER_PRINCIPAL: callsPerWindow(120),
  RATE_LIMIT_ADMIN_PER_TENANT: callsPerWindow(600),
  /**
   * Reads of document content, extracted text, listings, stats and metadata values
   * (document-service, review N6). A search's hit details are one listing.
   */
  RATE_LIMIT_READ_PER_PRINCIPAL: callsPerWindow(1200),
  RATE_LIMIT_READ_PER_TENANT: callsPerWindow(12000),
  /**
   * Model runs on request (review N5): OpenAI-compatible embeddings (embedding-service) and
   * rerank (query-service). Each call may hold hundreds of texts.
   */
  RATE_LIMIT_MODEL_PER_PRINCIPAL: callsPerWindow(120),
  RATE_LIMIT_MODEL_PER_TENANT: callsPerWindow(1200),
});
export type RateLimitConfig = z.infer<typeof rateLimitConfigSchema>;

/**
 * Model runs API callers ask for (POST /v1/embeddings, POST /v1/rerank), apart from the service's
 * own (ingestion, searches): at most MODEL_API_CONCURRENCY at once, MODEL_API_MAX_QUEUE more
 * waiting, and 429 `model_busy` past that (review N5). embedding-service and query-service.
 */
export const modelApiConfigSchema = z.object({
  MODEL_API_CONCURRENCY: env.positiveInt(1),
  MODEL_API_MAX_QUEUE: z.coerce.number().int().min(0).default(16),
});

/** S3-compatible object storage settings. */
export const s3ConfigSchema = z.object({
  S3_ENDPOINT: z.url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().default('kb-documents'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
});
export type S3Config = z.infer<typeof s3ConfigSchema>;

/**
 * The embedding model: the local ONNX model loaded offline from a folder (`onnx`), or any
 * OpenAI-compatible embeddings API (`openai`: OpenAI, Ollama, vLLM, TEI, LiteLLM). Add
 * `.superRefine(requireEmbeddingProviderSettings)` to a service schema that extends it.
 */
export const embeddingConfigSchema = z.object({
  EMBEDDING_PROVIDER: z.enum(['onnx', 'openai']).default('onnx'),
  /** onnx: the folder holding `<EMBEDDING_MODEL>/`; required with the onnx provider. */
  EMBEDDING_MODEL_DIR: z.string().min(1).optional(),
  EMBEDDING_MODEL: z.string().default('all-MiniLM-L6-v2'),
  /** Unset: the model's own (bge: cls; MiniLM, e5: mean), see @kb/embeddings' model catalogue. */
  EMBEDDING_POOLING: z.enum(['mean', 'cls']).optional(),
  EMBEDDING_THREADS: env.positiveInt(1),
  /**
   * onnx: model runs at once, each in a worker thread of its own with EMBEDDING_THREADS threads;
   * 1 runs the model in the main thread (docs/adr/0029).
   */
  EMBEDDING_RUNS: env.positiveInt(1),
  /**
   * onnx: texts per model run at most, gathered from concurrent callers. 1 (the default): each text
   * alone, so its vector depends on its text only; the int8 models quantize a run's activations
   * together, so a text sharing a run gets a vector that depends on its neighbours. More buys
   * 5-20 % of model throughput on short texts (docs/adr/0029, twelfth pass). Queries always run
   * alone.
   */
  EMBEDDING_MAX_BATCH: env.positiveInt(1),
  /**
   * onnx: a run's padded size at most, in estimated tokens (texts × the longest): long chunks run
   * one at a time, short texts many together, as the int8 model is fastest (docs/adr/0029).
   */
  EMBEDDING_MAX_BATCH_TOKENS: env.positiveInt(320),
  /** onnx: texts waiting for the model at most; beyond, embedding fails at once. */
  EMBEDDING_MAX_QUEUE: env.positiveInt(1024),
  /** openai: the API root that `/embeddings` is appended to, e.g. `http://localhost:11434/v1`. */
  EMBEDDING_API_URL: z.url().optional(),
  /** openai: sent as a bearer token; a secret, never logged. Self-hosted servers need none. */
  EMBEDDING_API_KEY: z.string().min(1).optional(),
  EMBEDDING_API_MODEL: z.string().min(1).optional(),
  /** openai: shorter vectors, for models that support it (text-embedding-3-*); else probed. */
  EMBEDDING_API_DIMENSIONS: z.coerce.number().int().positive().optional(),
  EMBEDDING_API_TIMEOUT_MS: env.positiveInt(30_000),
  /** openai: retries of a transient failure (network, timeout, 408, 429, 5xx). */
  EMBEDDING_API_MAX_RETRIES: z.coerce.number().int().min(0).max(20).default(4),
  /** openai: client-side budgets per (tenant, model); unset means no client-side limit. */
  EMBEDDING_RATE_LIMIT_RPM: z.coerce.number().int().positive().optional(),
  EMBEDDING_RATE_LIMIT_TPM: z.coerce.number().int().positive().optional(),
  /**
   * Models served beside EMBEDDING_MODEL, comma-separated, for knowledge bases that name them:
   * local models in EMBEDDING_MODEL_DIR of the main model's dimension (e.g. bge-small-en-v1.5,
   * e5-small-v2), or the FAKE test embedder `test-hashing-<dimension>` in test suites
   * (docs/adr/0012, 0028).
   */
  EMBEDDING_EXTRA_MODELS: z
    .string()
    .default('')
    .transform((list) =>
      list
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
});
export type EmbeddingConfig = z.infer<typeof embeddingConfigSchema>;

/** The variables the chosen embedding provider cannot start without. */
export function requireEmbeddingProviderSettings(
  config: EmbeddingConfig,
  ctx: z.RefinementCtx,
): void {
  const required =
    config.EMBEDDING_PROVIDER === 'onnx'
      ? (['EMBEDDING_MODEL_DIR'] as const)
      : (['EMBEDDING_API_URL', 'EMBEDDING_API_MODEL'] as const);
  for (const name of required) {
    if (!config[name]) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `required with EMBEDDING_PROVIDER=${config.EMBEDDING_PROVIDER}`,
      });
    }
  }
}

/** The vector store backend and its connection. */
export const vectorStoreConfigSchema = z.object({
  VECTOR_STORE: z.enum(['pgvector', 'pinecone']).default('pgvector'),
  VECTOR_DATABASE_URL: z.url().optional(),
  PINECONE_API_KEY: z.string().optional(),
  PINECONE_INDEX_HOST: z.string().optional(),
  /**
   * The sparse index (`vector_type: sparse`) that serves the lexical half of hybrid search with
   * VECTOR_STORE=pinecone (docs/adr/0057); required then.
   */
  PINECONE_SPARSE_INDEX_HOST: z.string().optional(),
});

/** Bearer-token verification at a public edge: an HS256 secret, a JWKS URL for RS256, a public key (RS256/ES256), or several. */
export const authConfigSchema = z.object({
  AUTH_JWT_SECRET: z.string().min(32, 'AUTH_JWT_SECRET must be at least 32 characters').optional(),
  AUTH_JWKS_URL: z.url().optional(),
  /** A public key (PEM) to verify RS256/ES256 tokens with: verifies, cannot mint (docs/adr/0020). */
  AUTH_PUBLIC_KEY: z.string().min(1).optional(),
  AUTH_ISSUER: z.string().optional(),
  AUTH_AUDIENCE: z.string().optional(),
  /** Tokens issued longer ago are refused whatever their expiry. */
  AUTH_MAX_TOKEN_AGE_SECONDS: env.positiveInt(86_400),
});
export type AuthConfig = z.infer<typeof authConfigSchema>;

/** Where a service asks acl-service for callers' principals, and how long it reuses an answer. */
export const accessConfigSchema = z.object({
  ACL_GRPC_ADDRESS: z.string().default('127.0.0.1:50061'),
  /** Staleness bound when a `kb.acl.v1` event is lost; events normally apply sooner. */
  AUTHZ_CACHE_TTL_MS: env.positiveInt(2000),
});

export const httpConfigSchema = (port: number) =>
  z.object({
    HOST: z.string().default('127.0.0.1'),
    PORT: env.port(port),
  });
