#!/usr/bin/env bash
# `npm run infra:down`: stops what infra:up started. Redis is stopped only when infra:up started
# it; a Redis the machine already ran is left alone. Data stays in $KB_HOME.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=servers.sh
source "$INFRA_DIR/servers.sh"

for name in kafka s3proxy; do
  if pid_alive "$name"; then say "stopping $name"; fi
  stop_daemon "$name"
done
if [[ -f "$RUN_DIR/redis.pid" ]]; then
  say "stopping redis"
  redis-cli -h 127.0.0.1 -p "$KB_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  rm -f "$RUN_DIR/redis.pid"
fi
if pg_running; then
  say "stopping postgres"
  pg_stop
fi
pg_stop_debian_cluster
