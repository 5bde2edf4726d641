#!/usr/bin/env bash
# `npm run infra:down`: stops what infra:up started. Postgres and Redis are stopped only when
# infra:up started them; servers the machine already ran are left alone. Data stays in $KB_HOME.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

for name in kafka s3proxy; do
  if pid_alive "$name"; then say "stopping $name"; fi
  stop_daemon "$name"
done
if [[ -f "$RUN_DIR/redis.pid" ]]; then
  say "stopping redis"
  redis-cli -h 127.0.0.1 -p "$KB_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  rm -f "$RUN_DIR/redis.pid"
fi
if [[ -f "$RUN_DIR/postgres.started-by-kb" ]]; then
  read -r version cluster <"$RUN_DIR/postgres.cluster"
  say "stopping postgres $version/$cluster"
  pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" stop || true
  rm -f "$RUN_DIR/postgres.started-by-kb" "$RUN_DIR/postgres.cluster"
fi
