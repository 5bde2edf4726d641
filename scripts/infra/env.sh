# shellcheck shell=bash
# Local settings shared by the infra scripts, `npm start` and `npm test`. Source it; every value
# can be overridden by exporting it first. Servers listen on 127.0.0.1 only.

export KB_HOME="${KB_HOME:-$HOME/.cache/kb}"
export KB_LOG_DIR="${KB_LOG_DIR:-$KB_HOME/logs}"

# The pinned Node (.nvmrc), installed once under KB_HOME and first on PATH from here on.
# shellcheck source=node.sh
source "$(dirname "${BASH_SOURCE[0]}")/node.sh"

export KB_KAFKA_PORT="${KB_KAFKA_PORT:-9092}"
export KB_KAFKA_CONTROLLER_PORT="${KB_KAFKA_CONTROLLER_PORT:-9093}"
export KB_S3_PORT="${KB_S3_PORT:-9000}"
export KB_PG_PORT="${KB_PG_PORT:-5432}"
export KB_REDIS_PORT="${KB_REDIS_PORT:-6379}"

export KAFKA_BROKERS="${KAFKA_BROKERS:-127.0.0.1:$KB_KAFKA_PORT}"
export DATABASE_URL="${DATABASE_URL:-postgres://kb:kb@127.0.0.1:$KB_PG_PORT/kb}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:$KB_REDIS_PORT}"
export VECTOR_STORE="${VECTOR_STORE:-pgvector}"
export VECTOR_DATABASE_URL="${VECTOR_DATABASE_URL:-postgres://kb:kb@127.0.0.1:$KB_PG_PORT/kb_vectors}"

export S3_ENDPOINT="${S3_ENDPOINT:-http://127.0.0.1:$KB_S3_PORT}"
export S3_REGION="${S3_REGION:-us-east-1}"
export S3_BUCKET="${S3_BUCKET:-kb-documents}"
# Local-only credentials of the local S3 server; never used elsewhere.
export S3_ACCESS_KEY_ID="${S3_ACCESS_KEY_ID:-kb-local}"
export S3_SECRET_ACCESS_KEY="${S3_SECRET_ACCESS_KEY:-kb-local-secret}"

# Rate limits (docs/adr/0020) are off on this machine: the benchmarks, the chaos run and the ACL
# oracle send thousands of calls a minute as one caller. The chart turns them on by default;
# test/e2e/limits.e2e-spec.ts sets its own. 0 means no limit.
export RATE_LIMIT_SEARCH_PER_PRINCIPAL="${RATE_LIMIT_SEARCH_PER_PRINCIPAL:-0}"
export RATE_LIMIT_SEARCH_PER_TENANT="${RATE_LIMIT_SEARCH_PER_TENANT:-0}"
export RATE_LIMIT_UPLOAD_PER_PRINCIPAL="${RATE_LIMIT_UPLOAD_PER_PRINCIPAL:-0}"
export RATE_LIMIT_UPLOAD_PER_TENANT="${RATE_LIMIT_UPLOAD_PER_TENANT:-0}"
export RATE_LIMIT_ADMIN_PER_PRINCIPAL="${RATE_LIMIT_ADMIN_PER_PRINCIPAL:-0}"
export RATE_LIMIT_ADMIN_PER_TENANT="${RATE_LIMIT_ADMIN_PER_TENANT:-0}"
export RATE_LIMIT_READ_PER_PRINCIPAL="${RATE_LIMIT_READ_PER_PRINCIPAL:-0}"
export RATE_LIMIT_READ_PER_TENANT="${RATE_LIMIT_READ_PER_TENANT:-0}"
export RATE_LIMIT_MODEL_PER_PRINCIPAL="${RATE_LIMIT_MODEL_PER_PRINCIPAL:-0}"
export RATE_LIMIT_MODEL_PER_TENANT="${RATE_LIMIT_MODEL_PER_TENANT:-0}"

export EMBEDDING_MODEL_DIR="${EMBEDDING_MODEL_DIR:-$KB_HOME/models}"
export EMBEDDING_MODEL="${EMBEDDING_MODEL:-all-MiniLM-L6-v2}"
# Served beside it, for knowledge bases that name them (fetch-model.sh installs all three).
export EMBEDDING_EXTRA_MODELS="${EMBEDDING_EXTRA_MODELS-bge-small-en-v1.5,e5-small-v2}"
# The cross-encoder for rerank (docs/adr/0044), installed by fetch-model.sh beside the embedding
# models. RERANKER_MODEL=none turns it off.
export RERANKER_MODEL_DIR="${RERANKER_MODEL_DIR:-$EMBEDDING_MODEL_DIR}"
export RERANKER_MODEL="${RERANKER_MODEL:-ms-marco-MiniLM-L-12-v2}"
# Both cores of a developer machine for one model run (docs/adr/0029): a service started by hand.
# scripts/lib/services.js starts embedding-service and query-service with two one-thread runs.
export EMBEDDING_THREADS="${EMBEDDING_THREADS:-2}"

# Local HS256 signing secret for bearer tokens (`kb token` mints them): random per machine,
# generated on first use under KB_HOME, never committed. Production uses AUTH_JWKS_URL (RS256).
if [[ -z "${AUTH_JWT_SECRET:-}" ]]; then
  if [[ ! -s "$KB_HOME/auth/jwt-secret" ]]; then
    mkdir -p "$KB_HOME/auth"
    (umask 077 && head -c 48 /dev/urandom | base64 | tr -d '\n' > "$KB_HOME/auth/jwt-secret")
  fi
  AUTH_JWT_SECRET="$(cat "$KB_HOME/auth/jwt-secret")"
  export AUTH_JWT_SECRET
fi

# Local key that encrypts webhook signing secrets at rest (docs/adr/0027): 32 random bytes, base64,
# generated on first use under KB_HOME, never committed. In a cluster it comes from a Secret
# mounted in webhook-service alone.
if [[ -z "${WEBHOOK_SECRET_KEY:-}" ]]; then
  if [[ ! -s "$KB_HOME/webhooks/secret-key" ]]; then
    mkdir -p "$KB_HOME/webhooks"
    (umask 077 && head -c 32 /dev/urandom | base64 | tr -d '\n' > "$KB_HOME/webhooks/secret-key")
  fi
  WEBHOOK_SECRET_KEY="$(cat "$KB_HOME/webhooks/secret-key")"
  export WEBHOOK_SECRET_KEY
fi
