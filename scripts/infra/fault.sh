#!/usr/bin/env bash
# Fault injection for `npm run chaos`: `fault.sh <kafka|postgres|redis|s3> <kill|stop|start>`.
# kill = SIGKILL (Kafka and the S3 server), stop = a clean stop, start = the server's usual start
# (the same `<server>_up` as infra:up, so it waits until the server is healthy again).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=servers.sh
source "$INFRA_DIR/servers.sh"

server="${1:?usage: fault.sh <kafka|postgres|redis|s3> <kill|stop|start>}"
action="${2:?usage: fault.sh <kafka|postgres|redis|s3> <kill|stop|start>}"

kill_daemon() {
  local file="$RUN_DIR/$1.pid"
  [[ -f "$file" ]] || return 0
  kill -KILL -- "-$(cat "$file")" 2>/dev/null || kill -KILL "$(cat "$file")" 2>/dev/null || true
  rm -f "$file"
}

case "$server:$action" in
  kafka:kill) kill_daemon kafka ;;
  kafka:stop) stop_daemon kafka ;;
  kafka:start) kafka_up ;;
  s3:kill) kill_daemon s3proxy ;;
  s3:stop) stop_daemon s3proxy ;;
  s3:start) s3_up ;;
  postgres:stop) pg_stop ;;
  postgres:start) pg_up ;;
  redis:stop) redis-cli -h 127.0.0.1 -p "$KB_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true ;;
  redis:start) redis_up ;;
  *) die "unknown fault $server $action" ;;
esac
