#!/usr/bin/env bash
# `npm run infra:status`: one line per local server; exits non-zero when any is down.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=servers.sh
source "$INFRA_DIR/servers.sh"

down=0
report() { # NAME ADDRESS CHECK
  if "$3"; then printf '%-9s up    %s\n' "$1" "$2"; else printf '%-9s down  %s\n' "$1" "$2"; down=1; fi
}
report kafka "$KAFKA_BROKERS" kafka_healthy
report s3 "$S3_ENDPOINT" s3_healthy
report postgres "127.0.0.1:$KB_PG_PORT" pg_healthy
report redis "$REDIS_URL" redis_healthy
report pgvector "127.0.0.1:$KB_PG_PORT/kb_vectors" pgvector_healthy
report roles "${PG_ROLES[*]}" pg_roles_healthy
report model "$EMBEDDING_MODEL_DIR/$EMBEDDING_MODEL" model_healthy
exit "$down"
