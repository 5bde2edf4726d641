{{/* Names and labels. */}}
{{- define "kb.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "kb.serviceName" -}}
{{- printf "%s-%s" (include "kb.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kb.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kb.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "kb.image" -}}
{{- $img := .root.Values.image -}}
{{- $tag := default .root.Chart.AppVersion $img.tag -}}
{{- if $img.registry -}}{{ printf "%s/%s/%s:%s" $img.registry $img.repository .name $tag }}{{- else -}}{{ printf "%s/%s:%s" $img.repository .name $tag }}{{- end -}}
{{- end -}}

{{- define "kb.secretName" -}}{{ include "kb.fullname" . }}-secrets{{- end -}}

{{- define "kb.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "kb.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* Services that talk to each dependency (their config schemas in apps/<service>/src/config). */}}
{{/* The name of the model that embeds the default pipeline: the local model, or the API's. */}}
{{- define "kb.embeddingModelName" -}}
{{- if eq .Values.embedding.provider "openai" }}{{ .Values.embedding.api.model }}{{ else }}{{ .Values.embedding.model }}{{ end -}}
{{- end -}}

{{- define "kb.pipelineServices" -}}document-service parser-service embedding-service indexing-service{{- end -}}
{{- define "kb.databaseServices" -}}document-service embedding-service indexing-service query-service acl-service webhook-service{{- end -}}
{{- define "kb.kafkaServices" -}}document-service parser-service embedding-service indexing-service query-service acl-service webhook-service{{- end -}}
{{/*
Services that verify bearer tokens at a public edge. With HS256 each of them holds the shared
secret, and so can mint tokens: every one needs it to verify (none mints), which is why HS256 is
exclusive with auth.jwksUrl / auth.publicKey (kb.validate).
*/}}
{{- define "kb.authServices" -}}document-service embedding-service query-service acl-service webhook-service{{- end -}}
{{/* Services with a public API (ingress paths, the -public NetworkPolicy); gRPC: query-service only. */}}
{{- define "kb.publicServices" -}}document-service query-service embedding-service acl-service webhook-service{{- end -}}
{{/* Services that ask acl-service for callers' principals or permissions (embedding-service: POST /v1/embeddings needs read on documents). */}}
{{- define "kb.accessServices" -}}document-service query-service webhook-service embedding-service{{- end -}}
{{/* Services with a Redis client: the result cache (query) and the shared rate limits. */}}
{{- define "kb.redisServices" -}}document-service query-service acl-service indexing-service webhook-service embedding-service{{- end -}}
{{/* Where mounted TLS material lives in the pods (Secrets, read-only). */}}
{{- define "kb.kafkaTlsDir" -}}/etc/kb/kafka-tls{{- end -}}
{{- define "kb.redisTlsDir" -}}/etc/kb/redis-tls{{- end -}}
{{- define "kb.grpcServices" -}}query-service acl-service{{- end -}}
{{- define "kb.schemaServices" -}}document-service acl-service embedding-service indexing-service webhook-service{{- end -}}
{{- define "kb.vectorServices" -}}indexing-service query-service{{- end -}}
{{- define "kb.modelServices" -}}parser-service embedding-service query-service{{- end -}}

{{- define "kb.configMapName" -}}{{ include "kb.serviceName" . }}-env{{- end -}}

{{/*
Non-secret environment of one service, as ConfigMap data (the Deployment reads it with envFrom).
Every variable a service requires at boot is here or in kb.secretEnv below.
*/}}
{{- define "kb.configEnv" -}}
{{- $v := .root.Values -}}
{{- $name := .name -}}
HOST: "0.0.0.0"
PORT: {{ $v.containerPorts.http | quote }}
NODE_ENV: production
{{- with (index $v.services $name).nodeOptions }}
NODE_OPTIONS: {{ . | quote }}
{{- end }}
HOME: /tmp
LOG_LEVEL: {{ $v.logLevel | quote }}
OTEL_SERVICE_NAME: {{ $name | quote }}
{{- if and $v.metrics (hasKey $v.metrics "maxKnowledgeBases") }}
METRICS_MAX_KNOWLEDGE_BASES: {{ $v.metrics.maxKnowledgeBases | int | quote }}
{{- end }}
{{- if $v.otel.endpoint }}
OTEL_EXPORTER_OTLP_ENDPOINT: {{ $v.otel.endpoint | quote }}
{{- end }}
{{- if has $name (splitList " " (include "kb.kafkaServices" .)) }}
KAFKA_BROKERS: {{ $v.kafka.brokers | quote }}
{{- if $v.kafka.tls.enabled }}
KAFKA_SSL: "true"
{{- if $v.kafka.tls.existingSecret }}
KAFKA_SSL_CA_FILE: {{ printf "%s/ca.crt" (include "kb.kafkaTlsDir" .) | quote }}
{{- if $v.kafka.tls.mutual }}
KAFKA_SSL_CERT_FILE: {{ printf "%s/tls.crt" (include "kb.kafkaTlsDir" .) | quote }}
KAFKA_SSL_KEY_FILE: {{ printf "%s/tls.key" (include "kb.kafkaTlsDir" .) | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- if $v.kafka.sasl.mechanism }}
KAFKA_SASL_MECHANISM: {{ $v.kafka.sasl.mechanism | quote }}
KAFKA_SASL_USERNAME: {{ required "kafka.sasl.username is required with kafka.sasl.mechanism" $v.kafka.sasl.username | quote }}
{{- end }}
{{- end }}
{{- if has $name (splitList " " (include "kb.redisServices" .)) }}
{{- if $v.redis.url }}
REDIS_URL: {{ $v.redis.url | quote }}
{{- if $v.redis.username }}
REDIS_USERNAME: {{ $v.redis.username | quote }}
{{- end }}
{{- if $v.redis.tlsCaSecret }}
REDIS_TLS_CA_FILE: {{ printf "%s/ca.crt" (include "kb.redisTlsDir" .) | quote }}
{{- end }}
{{- end }}
# Rate limits (docs/adr/0020): calls per window per caller and per tenant; 0 is no limit.
RATE_LIMIT_WINDOW_SECONDS: {{ $v.rateLimits.windowSeconds | quote }}
RATE_LIMIT_SEARCH_PER_PRINCIPAL: {{ $v.rateLimits.search.perPrincipal | quote }}
RATE_LIMIT_SEARCH_PER_TENANT: {{ $v.rateLimits.search.perTenant | quote }}
RATE_LIMIT_UPLOAD_PER_PRINCIPAL: {{ $v.rateLimits.upload.perPrincipal | quote }}
RATE_LIMIT_UPLOAD_PER_TENANT: {{ $v.rateLimits.upload.perTenant | quote }}
RATE_LIMIT_ADMIN_PER_PRINCIPAL: {{ $v.rateLimits.admin.perPrincipal | quote }}
RATE_LIMIT_ADMIN_PER_TENANT: {{ $v.rateLimits.admin.perTenant | quote }}
RATE_LIMIT_READ_PER_PRINCIPAL: {{ $v.rateLimits.read.perPrincipal | quote }}
RATE_LIMIT_READ_PER_TENANT: {{ $v.rateLimits.read.perTenant | quote }}
RATE_LIMIT_MODEL_PER_PRINCIPAL: {{ $v.rateLimits.model.perPrincipal | quote }}
RATE_LIMIT_MODEL_PER_TENANT: {{ $v.rateLimits.model.perTenant | quote }}
{{- if has $name (list "embedding-service" "query-service") }}
# Model runs on request (POST /v1/embeddings, POST /v1/rerank): at once, and waiting before 429 model_busy.
MODEL_API_CONCURRENCY: {{ $v.rateLimits.model.concurrency | quote }}
MODEL_API_MAX_QUEUE: {{ $v.rateLimits.model.maxQueue | quote }}
{{- end }}
{{- end }}
{{- if has $name (splitList " " (include "kb.authServices" .)) }}
{{- if $v.auth.jwksUrl }}
{{- if not (and $v.auth.issuer $v.auth.audience) }}
{{- fail "auth: with auth.jwksUrl, set auth.issuer and auth.audience (otherwise any token your identity provider signs for any application is accepted)" }}
{{- end }}
AUTH_JWKS_URL: {{ $v.auth.jwksUrl | quote }}
{{- end }}
{{- if $v.auth.publicKey }}
# Verifies RS256/ES256 tokens with this public key: the pods can verify but not mint tokens.
AUTH_PUBLIC_KEY: {{ $v.auth.publicKey | quote }}
{{- end }}
AUTH_MAX_TOKEN_AGE_SECONDS: {{ $v.auth.maxTokenAgeSeconds | quote }}
{{- if $v.auth.issuer }}
AUTH_ISSUER: {{ $v.auth.issuer | quote }}
{{- end }}
{{- if $v.auth.audience }}
AUTH_AUDIENCE: {{ $v.auth.audience | quote }}
{{- end }}
{{- if has $name (splitList " " (include "kb.accessServices" .)) }}
# Callers' principals and permissions come from acl-service; answers are reused this long at most.
ACL_GRPC_ADDRESS: {{ printf "%s:%v" (include "kb.serviceName" (dict "root" .root "name" "acl-service")) $v.containerPorts.grpc | quote }}
AUTHZ_CACHE_TTL_MS: {{ $v.auth.cacheTtlMs | quote }}
{{- end }}
{{- end }}
{{- if has $name (splitList " " (include "kb.pipelineServices" .)) }}
S3_REGION: {{ $v.s3.region | quote }}
S3_BUCKET: {{ $v.s3.bucket | quote }}
{{- if $v.s3.endpoint }}
S3_ENDPOINT: {{ $v.s3.endpoint | quote }}
{{- end }}
{{- end }}
{{- if eq $name "document-service" }}
# The default pipeline's model: knowledge bases that name none embed with it (docs/adr/0012).
EMBEDDING_MODEL: {{ include "kb.embeddingModelName" .root | quote }}
# Asked which models are served, and their dimensions, when a knowledge base is created.
EMBEDDING_SERVICE_URL: {{ printf "http://%s" (include "kb.serviceName" (dict "root" .root "name" "embedding-service")) | quote }}
# The readers of documents changed since the last pass go to indexing-service this often, to
# repair any index that differs; every document's at the full interval (memberships too).
ACCESS_RECONCILE_INTERVAL_MS: {{ $v.convergence.accessReconcileIntervalMs | quote }}
RECONCILE_FULL_INTERVAL_MS: {{ $v.convergence.fullReconcileIntervalMs | int64 | quote }}
# At most this many documents a second, so that a full pass is not a burst (docs/adr/0018).
ACCESS_RECONCILE_RATE: {{ $v.convergence.accessReconcileRate | int64 | quote }}
# What each tenant's S3 sources may read (docs/adr/0026): tenant to [{bucket, prefix}]; none by default.
SOURCE_ALLOWLIST: {{ $v.sources.allowlist | toJson | quote }}
# Every tenant's limits (docs/adr/0053); 0 is none. Tenant admins may only tighten them.
QUOTA_MAX_DOCUMENTS: {{ $v.quotas.maxDocuments | int64 | quote }}
QUOTA_MAX_BYTES: {{ $v.quotas.maxBytes | int64 | quote }}
QUOTA_MAX_KNOWLEDGE_BASES: {{ $v.quotas.maxKnowledgeBases | int64 | quote }}
QUOTA_MAX_SEARCHES_PER_DAY: {{ $v.quotas.maxSearchesPerDay | int64 | quote }}
# How often retention deletes what is due (docs/adr/0052); 0 is off.
RETENTION_TICK_MS: {{ $v.retention.tickMs | int64 | quote }}
# How often ended grants leave documents' ACLs (docs/adr/0054); 0 is off.
GRANT_EXPIRY_TICK_MS: {{ $v.grants.expiryTickMs | int64 | quote }}
SOURCE_SYNC_MAX_FILES: {{ $v.sources.maxFilesPerSync | quote }}
{{- end }}
{{- if eq $name "acl-service" }}
POLICY_RELOAD_INTERVAL_MS: {{ $v.convergence.policyReloadIntervalMs | quote }}
# How often ended grants leave the stored policy (docs/adr/0054); 0 is off.
GRANT_EXPIRY_INTERVAL_MS: {{ $v.grants.expiryTickMs | int64 | quote }}
{{- end }}
{{- if eq $name "webhook-service" }}
# Deliveries to receivers (docs/adr/0027): tries, exponential waits, auto-disable, SSRF switch.
WEBHOOK_ALLOW_PRIVATE_URLS: {{ $v.webhooks.allowPrivateUrls | quote }}
WEBHOOK_MAX_ATTEMPTS: {{ $v.webhooks.maxAttempts | quote }}
WEBHOOK_RETRY_BASE_MS: {{ $v.webhooks.retryBaseMs | quote }}
WEBHOOK_RETRY_MAX_MS: {{ $v.webhooks.retryMaxMs | quote }}
WEBHOOK_DISABLE_AFTER_FAILURES: {{ $v.webhooks.disableAfterFailures | quote }}
WEBHOOK_DISABLE_AFTER_MS: {{ $v.webhooks.disableAfterMs | quote }}
WEBHOOK_TIMEOUT_MS: {{ $v.webhooks.timeoutMs | quote }}
WEBHOOK_DELIVERY_RETENTION_DAYS: {{ $v.webhooks.deliveryRetentionDays | quote }}
{{- end }}
{{- if has $name (splitList " " (include "kb.schemaServices" .)) }}
# The pre-install/pre-upgrade Job migrates every schema; without it each service migrates its own at
# start (Kysely's lock makes concurrent replicas safe). Readiness waits for pending migrations.
MIGRATE_ON_START: {{ ternary "false" "true" $v.migrations.enabled | quote }}
{{- end }}
{{- if and (eq $name "indexing-service") (eq $v.vectorStore.backend "pgvector") }}
# The pgvector tables indexing-service owns (one per dimension); readiness waits for them too.
VECTOR_DIMENSIONS: {{ include "kb.vectorDimensions" .root | quote }}
{{- end }}
{{- if has $name (splitList " " (include "kb.vectorServices" .)) }}
VECTOR_STORE: {{ $v.vectorStore.backend | quote }}
{{- if eq $v.vectorStore.backend "pinecone" }}
PINECONE_INDEX_HOST: {{ required "vectorStore.pinecone.indexHost is required with the pinecone backend" $v.vectorStore.pinecone.indexHost | quote }}
PINECONE_SPARSE_INDEX_HOST: {{ required "vectorStore.pinecone.sparseIndexHost is required with the pinecone backend" $v.vectorStore.pinecone.sparseIndexHost | quote }}
{{- if eq $name "indexing-service" }}
GENERATION_SETTLE_MS: {{ $v.vectorStore.pinecone.settleMs | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- if has $name (splitList " " (include "kb.modelServices" .)) }}
# embedding and query embed with the same provider and model (queries and chunks share one vector
# space); parser-service counts tokens with that model's tokenizer.
EMBEDDING_PROVIDER: {{ $v.embedding.provider | quote }}
{{- if eq $v.embedding.provider "openai" }}
{{- $api := $v.embedding.api }}
EMBEDDING_API_URL: {{ required "embedding.api.url is required with the openai provider" $api.url | quote }}
EMBEDDING_API_MODEL: {{ required "embedding.api.model is required with the openai provider" $api.model | quote }}
EMBEDDING_API_TIMEOUT_MS: {{ $api.timeoutMs | quote }}
EMBEDDING_API_MAX_RETRIES: {{ $api.maxRetries | quote }}
{{- if $api.dimensions }}
EMBEDDING_API_DIMENSIONS: {{ $api.dimensions | quote }}
{{- end }}
{{- if $api.rateLimitRpm }}
EMBEDDING_RATE_LIMIT_RPM: {{ $api.rateLimitRpm | quote }}
{{- end }}
{{- if $api.rateLimitTpm }}
EMBEDDING_RATE_LIMIT_TPM: {{ $api.rateLimitTpm | quote }}
{{- end }}
EMBEDDING_MODEL: {{ include "kb.embeddingModelName" .root | quote }}
{{- else }}
EMBEDDING_MODEL_DIR: {{ $v.embedding.modelVolume.mountPath | quote }}
EMBEDDING_MODEL: {{ include "kb.embeddingModelName" .root | quote }}
{{- if $v.embedding.pooling }}
EMBEDDING_POOLING: {{ $v.embedding.pooling | quote }}
{{- end }}
EMBEDDING_THREADS: {{ $v.embedding.threads | quote }}
EMBEDDING_RUNS: {{ $v.embedding.runs | quote }}
EMBEDDING_MAX_BATCH: {{ $v.embedding.maxBatch | quote }}
EMBEDDING_MAX_BATCH_TOKENS: {{ $v.embedding.maxBatchTokens | quote }}
EMBEDDING_MAX_QUEUE: {{ $v.embedding.maxQueue | quote }}
{{- if $v.embedding.extraModels }}
# Served beside EMBEDDING_MODEL, for knowledge bases that name them (docs/adr/0028).
EMBEDDING_EXTRA_MODELS: {{ join "," $v.embedding.extraModels | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- if eq $name "embedding-service" }}
EMBEDDING_BATCH_SIZE: {{ $v.embedding.batchSize | quote }}
{{- end }}
{{- if eq $name "parser-service" }}
# Text extraction in worker threads, each with its own heap and clock (docs/adr/0016).
PARSER_WORKERS: {{ $v.parser.workers | quote }}
PARSER_WORKER_MAX_MEMORY_MB: {{ $v.parser.workerMaxMemoryMb | quote }}
PARSER_TIMEOUT_MS: {{ $v.parser.timeoutMs | quote }}
PARSER_MAX_TEXT_CHARS: {{ $v.parser.maxTextChars | quote }}
PARSER_ZIP_MAX_ENTRIES: {{ $v.parser.zipMaxEntries | quote }}
PARSER_ZIP_MAX_INFLATED_MB: {{ $v.parser.zipMaxInflatedMb | quote }}
PARSER_MAX_ATTACHMENTS: {{ $v.parser.maxAttachments | quote }}
# OCR in its own pool (docs/adr/0050).
OCR_WORKERS: {{ $v.parser.ocr.workers | quote }}
OCR_WORKER_MAX_MEMORY_MB: {{ $v.parser.ocr.workerMaxMemoryMb | quote }}
OCR_PAGE_TIMEOUT_MS: {{ $v.parser.ocr.pageTimeoutMs | quote }}
OCR_MAX_PAGES: {{ $v.parser.ocr.maxPages | quote }}
OCR_MAX_IMAGE_PIXELS: {{ $v.parser.ocr.maxImagePixels | quote }}
OCR_MIN_CONFIDENCE: {{ $v.parser.ocr.minConfidence | quote }}
OCR_LANGUAGES: {{ $v.parser.ocr.languages | quote }}
{{- end }}
{{- if has $name (splitList " " (include "kb.grpcServices" .)) }}
GRPC_HOST: "0.0.0.0"
GRPC_PORT: {{ $v.containerPorts.grpc | quote }}
{{- end }}
{{- if eq $name "query-service" }}
# GetDocument / ListDocuments over gRPC read document-service's REST API in-cluster.
DOCUMENT_SERVICE_URL: {{ printf "http://%s" (include "kb.serviceName" (dict "root" .root "name" "document-service")) | quote }}
HYBRID_SEMANTIC_WEIGHT: {{ $v.search.semanticWeight | quote }}
PSEUDO_RELEVANCE_FEEDBACK: {{ $v.search.pseudoRelevanceFeedback | quote }}
LEXICAL_MEMORY_CHUNKS: {{ $v.search.lexicalMemoryChunks | quote }}
LEXICAL_IDF: {{ $v.search.lexicalIdf | quote }}
LEXICAL_MEMORY_POSTINGS: {{ if kindIs "string" $v.search.lexicalMemoryPostings }}{{ $v.search.lexicalMemoryPostings | quote }}{{ else }}{{ $v.search.lexicalMemoryPostings | int64 | quote }}{{ end }}
LEXICAL_WARM_TIMEOUT_MS: {{ $v.search.lexicalWarmTimeoutMs | int64 | quote }}
# One warm set per release, should releases share a Redis (docs/adr/0062).
LEXICAL_WARM_KEY: {{ printf "kb:lexical:warm:v1:%s" .root.Release.Name | quote }}
SEARCH_CACHE_TTL_SECONDS: {{ $v.search.cacheTtlSeconds | quote }}
RERANK_CANDIDATES: {{ $v.search.rerankCandidates | quote }}
RERANK_BUDGET_MS: {{ $v.search.rerankBudgetMs | quote }}
RERANK_THREADS: {{ $v.search.rerankThreads | quote }}
{{- if include "kb.rerankerModel" .root }}
# The cross-encoder is read from the model volume (mounted on query-service whenever one is set).
RERANKER_MODEL: {{ $v.search.rerankerModel | quote }}
RERANKER_MODEL_DIR: {{ $v.embedding.modelVolume.mountPath | quote }}
{{- end }}
{{- if $v.search.queryRewrite.apiUrl }}
QUERY_REWRITE_API_URL: {{ $v.search.queryRewrite.apiUrl | quote }}
QUERY_REWRITE_MODEL: {{ required "search.queryRewrite.model is required with search.queryRewrite.apiUrl" $v.search.queryRewrite.model | quote }}
QUERY_REWRITE_TIMEOUT_MS: {{ $v.search.queryRewrite.timeoutMs | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Secret environment of one service: secretKeyRefs to the chart's Secret or existing ones. */}}
{{- define "kb.secretEnv" -}}
{{- $v := .root.Values -}}
{{- $name := .name -}}
{{- $secret := default (include "kb.secretName" .root) .secretName -}}
{{- if and (has $name (splitList " " (include "kb.pipelineServices" .))) (or $v.s3.existingSecret $v.s3.accessKeyId) }}
{{ include "kb.secretKeyRef" (dict "env" "S3_ACCESS_KEY_ID" "secret" ($v.s3.existingSecret | default $secret) "key" (ternary $v.s3.accessKeyIdKey "s3-access-key-id" (ne $v.s3.existingSecret ""))) }}
{{ include "kb.secretKeyRef" (dict "env" "S3_SECRET_ACCESS_KEY" "secret" ($v.s3.existingSecret | default $secret) "key" (ternary $v.s3.secretAccessKeyKey "s3-secret-access-key" (ne $v.s3.existingSecret ""))) }}
{{- end }}
{{- if and (has $name (splitList " " (include "kb.authServices" .))) (or $v.auth.existingSecret $v.auth.jwtSecret) }}
{{ include "kb.secretKeyRef" (dict "env" "AUTH_JWT_SECRET" "secret" ($v.auth.existingSecret | default $secret) "key" (ternary $v.auth.existingSecretKey "auth-jwt-secret" (ne $v.auth.existingSecret ""))) }}
{{- end }}
{{- if and (has $name (splitList " " (include "kb.modelServices" .))) (eq $v.embedding.provider "openai") (or $v.embedding.api.existingSecret $v.embedding.api.apiKey) }}
{{ include "kb.secretKeyRef" (dict "env" "EMBEDDING_API_KEY" "secret" ($v.embedding.api.existingSecret | default $secret) "key" (ternary $v.embedding.api.existingSecretKey "embedding-api-key" (ne $v.embedding.api.existingSecret ""))) }}
{{- end }}
{{- if and (has $name (splitList " " (include "kb.kafkaServices" .))) $v.kafka.sasl.mechanism }}
{{ include "kb.secretKeyRef" (dict "env" "KAFKA_SASL_PASSWORD" "secret" (required "kafka.sasl.existingSecret is required with kafka.sasl.mechanism (the password is never a value)" $v.kafka.sasl.existingSecret) "key" $v.kafka.sasl.existingSecretKey) }}
{{- end }}
{{- if and (has $name (splitList " " (include "kb.redisServices" .))) $v.redis.url $v.redis.existingSecret }}
{{ include "kb.secretKeyRef" (dict "env" "REDIS_PASSWORD" "secret" $v.redis.existingSecret "key" $v.redis.existingSecretKey) }}
{{- end }}
{{- if and (eq $name "query-service") $v.search.queryRewrite.apiUrl $v.search.queryRewrite.existingSecret }}
{{ include "kb.secretKeyRef" (dict "env" "QUERY_REWRITE_API_KEY" "secret" $v.search.queryRewrite.existingSecret "key" $v.search.queryRewrite.existingSecretKey) }}
{{- end }}
{{- if has $name (splitList " " (include "kb.databaseServices" .)) }}
{{ include "kb.databaseUrlRef" (dict "root" .root "name" $name "secret" $secret) }}
{{- end }}
{{- if eq $name "webhook-service" }}
{{ include "kb.secretKeyRef" (dict "env" "WEBHOOK_SECRET_KEY" "secret" (required "webhooks.secretKey.existingSecret is required: a Secret with 32 random bytes, base64 (openssl rand -base64 32), that encrypts the webhooks' signing secrets" $v.webhooks.secretKey.existingSecret) "key" $v.webhooks.secretKey.existingSecretKey) }}
{{- end }}
{{- if has $name (splitList " " (include "kb.vectorServices" .)) }}
{{- if eq $v.vectorStore.backend "pgvector" }}
{{ include "kb.secretKeyRef" (dict "env" "VECTOR_DATABASE_URL" "secret" ($v.vectorStore.pgvector.existingSecret | default $secret) "key" (ternary $v.vectorStore.pgvector.existingSecretKey "vector-database-url" (ne $v.vectorStore.pgvector.existingSecret ""))) }}
{{- else }}
{{ include "kb.secretKeyRef" (dict "env" "PINECONE_API_KEY" "secret" ($v.vectorStore.pinecone.existingSecret | default $secret) "key" (ternary $v.vectorStore.pinecone.existingSecretKey "pinecone-api-key" (ne $v.vectorStore.pinecone.existingSecret ""))) }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
DATABASE_URL of one service: its own role's Secret (postgres.perService.<service>), or the shared
URL (postgres.existingSecret, or the chart's / the hook's Secret) only with postgres.sharedRole.
.secret: the chart's Secret (Deployments) or the hook-scoped one (migrations Job).
*/}}
{{- define "kb.databaseUrlRef" -}}
{{- $pg := .root.Values.postgres -}}
{{- $own := index $pg.perService .name | default dict -}}
{{- if $own.existingSecret -}}
{{ include "kb.secretKeyRef" (dict "env" "DATABASE_URL" "secret" $own.existingSecret "key" ($own.existingSecretKey | default "database-url")) }}
{{- else if $pg.sharedRole -}}
{{ include "kb.secretKeyRef" (dict "env" "DATABASE_URL" "secret" ($pg.existingSecret | default .secret) "key" (ternary $pg.existingSecretKey "database-url" (ne $pg.existingSecret ""))) }}
{{- else -}}
{{- fail (printf "postgres.perService.%s.existingSecret is required: a Secret with the DATABASE_URL of a role that owns %s's schema only (docs/adr/0031 has the SQL); or postgres.sharedRole: true to give every service the shared postgres URL" .name .name) -}}
{{- end -}}
{{- end -}}

{{/*
Settings the chart refuses (rendered once, from secret.yaml): plaintext or anonymous Kafka and
Redis unless marked insecure (review M9), HS256 beside a JWKS URL or a public key (review L3).
*/}}
{{- define "kb.validate" -}}
{{- $v := .Values -}}
{{- if not $v.kafka.insecure -}}
{{- if not $v.kafka.tls.enabled -}}
{{- fail "kafka: TLS is required (kafka.tls.enabled: true, with kafka.sasl.* or a mutual-TLS client certificate); kafka.insecure: true allows plaintext Kafka, for development only (any pod reaching the brokers then reads every tenant's text and forges events)" -}}
{{- end -}}
{{- if not (or $v.kafka.sasl.mechanism (and $v.kafka.tls.mutual $v.kafka.tls.existingSecret)) -}}
{{- fail "kafka: client authentication is required: kafka.sasl.mechanism with kafka.sasl.username and kafka.sasl.existingSecret, or kafka.tls.mutual with a client certificate in kafka.tls.existingSecret; kafka.insecure: true allows anonymous Kafka, for development only" -}}
{{- end -}}
{{- end -}}
{{- if and $v.redis.url (not $v.redis.insecure) -}}
{{- if not (hasPrefix "rediss://" $v.redis.url) -}}
{{- fail "redis: TLS is required (a rediss:// redis.url); redis.insecure: true allows plaintext redis://, for development only" -}}
{{- end -}}
{{- if not $v.redis.existingSecret -}}
{{- fail "redis: AUTH is required: redis.existingSecret (the password, and redis.username for an ACL user); redis.insecure: true allows Redis without AUTH, for development only" -}}
{{- end -}}
{{- end -}}
{{- if and (or $v.auth.existingSecret $v.auth.jwtSecret) (or $v.auth.jwksUrl $v.auth.publicKey) -}}
{{- fail "auth: an HS256 secret (auth.existingSecret or auth.jwtSecret) cannot be combined with auth.jwksUrl or auth.publicKey: every service holding it could mint tokens for any tenant; set auth.existingSecret and auth.jwtSecret to empty strings" -}}
{{- end -}}
{{- end -}}

{{- define "kb.secretKeyRef" -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
{{- end -}}

{{/*
One container of the migrations Job: the service's own image runs its dist/migrate.js with only
what migrating reads (the database URLs, from the hook-scoped Secret or the existing ones).
*/}}
{{- define "kb.migrateContainer" -}}
{{- $v := .root.Values -}}
{{- $pg := $v.vectorStore.pgvector -}}
- name: {{ trimSuffix "-service" .name }}
  image: {{ include "kb.image" (dict "root" .root "name" .name) }}
  imagePullPolicy: {{ $v.image.pullPolicy }}
  command: ["node", "apps/{{ .name }}/dist/migrate.js"]
  env:
    - name: NODE_ENV
      value: production
    - name: LOG_LEVEL
      value: {{ $v.logLevel | quote }}
    {{- include "kb.databaseUrlRef" (dict "root" .root "name" .name "secret" .hookSecret) | nindent 4 }}
    {{- if eq .name "indexing-service" }}
    - name: VECTOR_STORE
      value: {{ $v.vectorStore.backend | quote }}
    {{- if eq $v.vectorStore.backend "pgvector" }}
    - name: VECTOR_DIMENSIONS
      value: {{ include "kb.vectorDimensions" .root | quote }}
    {{- include "kb.secretKeyRef" (dict "env" "VECTOR_DATABASE_URL" "secret" ($pg.existingSecret | default .hookSecret) "key" (ternary $pg.existingSecretKey "vector-database-url" (ne $pg.existingSecret ""))) | nindent 4 }}
    {{- end }}
    {{- end }}
  resources:
    {{- toYaml $v.migrations.resources | nindent 4 }}
  securityContext:
    {{- include "kb.containerSecurityContext" .root | nindent 4 }}
  volumeMounts:
    - name: tmp
      mountPath: /tmp
{{- end -}}

{{/* The pgvector tables the Job creates, one per embedding dimension: "384" or "384,768". */}}
{{- define "kb.vectorDimensions" -}}
{{- $dims := list -}}
{{- range .Values.vectorStore.pgvector.dimensions }}{{ $dims = append $dims (toString .) }}{{ end -}}
{{- join "," $dims -}}
{{- end -}}

{{/* The cross-encoder query-service loads: search.rerankerModel, empty when "" or "none". */}}
{{- define "kb.rerankerModel" -}}
{{- if and .Values.search.rerankerModel (ne .Values.search.rerankerModel "none") -}}
{{ .Values.search.rerankerModel }}
{{- end -}}
{{- end }}
