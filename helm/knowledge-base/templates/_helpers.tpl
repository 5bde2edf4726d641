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

{{/* An env var read from the chart's Secret or from an existing one. */}}
{{- define "kb.secretEnv" -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ if .existingSecret }}{{ .existingSecret }}{{ else }}{{ include "kb.secretName" .root }}{{ end }}
      key: {{ if .existingSecret }}{{ .existingKey }}{{ else }}{{ .key }}{{ end }}
{{- end -}}

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

{{/* Environment every service needs, then what each one requires at boot (its config schema). */}}
{{- define "kb.env" -}}
{{- $v := .root.Values -}}
- name: HOST
  value: "0.0.0.0"
- name: PORT
  value: "3000"
- name: NODE_ENV
  value: production
- name: HOME
  value: /tmp
- name: LOG_LEVEL
  value: {{ $v.logLevel | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ .name }}
{{- if $v.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $v.otel.endpoint | quote }}
{{- end }}
{{- if has .name (list "document-service" "parser-service" "embedding-service" "indexing-service") }}
- name: KAFKA_BROKERS
  value: {{ $v.kafka.brokers | quote }}
- name: S3_REGION
  value: {{ $v.s3.region | quote }}
- name: S3_BUCKET
  value: {{ $v.s3.bucket | quote }}
{{- if $v.s3.endpoint }}
- name: S3_ENDPOINT
  value: {{ $v.s3.endpoint | quote }}
{{- end }}
{{- if or $v.s3.existingSecret $v.s3.accessKeyId }}
{{ include "kb.secretEnv" (dict "root" .root "env" "S3_ACCESS_KEY_ID" "key" "s3-access-key-id" "existingSecret" $v.s3.existingSecret "existingKey" $v.s3.accessKeyIdKey) }}
{{ include "kb.secretEnv" (dict "root" .root "env" "S3_SECRET_ACCESS_KEY" "key" "s3-secret-access-key" "existingSecret" $v.s3.existingSecret "existingKey" $v.s3.secretAccessKeyKey) }}
{{- end }}
{{- end }}
{{- if has .name (list "document-service" "indexing-service" "query-service") }}
{{ include "kb.secretEnv" (dict "root" .root "env" "DATABASE_URL" "key" "database-url" "existingSecret" $v.postgres.existingSecret "existingKey" $v.postgres.existingSecretKey) }}
{{- end }}
{{- if eq .name "document-service" }}
- name: MIGRATE_ON_START
  value: {{ ternary "false" "true" $v.migrations.enabled | quote }}
{{- end }}
{{- if has .name (list "indexing-service" "query-service") }}
- name: VECTOR_STORE
  value: {{ $v.vectorStore.backend | quote }}
{{- if eq $v.vectorStore.backend "pgvector" }}
{{ include "kb.secretEnv" (dict "root" .root "env" "VECTOR_DATABASE_URL" "key" "vector-database-url" "existingSecret" $v.vectorStore.pgvector.existingSecret "existingKey" $v.vectorStore.pgvector.existingSecretKey) }}
{{- else }}
- name: PINECONE_INDEX_HOST
  value: {{ $v.vectorStore.pinecone.indexHost | quote }}
{{ include "kb.secretEnv" (dict "root" .root "env" "PINECONE_API_KEY" "key" "pinecone-api-key" "existingSecret" $v.vectorStore.pinecone.existingSecret "existingKey" $v.vectorStore.pinecone.existingSecretKey) }}
{{- end }}
{{- end }}
{{- if has .name (list "embedding-service" "query-service") }}
- name: EMBEDDING_MODEL_DIR
  value: /models
- name: EMBEDDING_MODEL
  value: {{ $v.embedding.model | quote }}
- name: EMBEDDING_POOLING
  value: {{ $v.embedding.pooling | quote }}
{{- end }}
{{- if eq .name "query-service" }}
- name: GRPC_HOST
  value: "0.0.0.0"
- name: GRPC_PORT
  value: "50051"
{{- if $v.redis.url }}
- name: REDIS_URL
  value: {{ $v.redis.url | quote }}
{{- end }}
{{- end }}
{{- end -}}
